-- One row per projection. Async projections advance it in the same transaction
-- as their read-model writes, so a crash never applies an event twice.
-- Inline projections are current by construction; their row records rebuilds.
CREATE TABLE projection_checkpoints (
  name        text PRIMARY KEY,
  mode        text NOT NULL,
  tx_id       bigint NOT NULL DEFAULT 0,
  position    bigint NOT NULL DEFAULT 0,
  events      bigint NOT NULL DEFAULT 0,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  rebuilt_at  timestamptz,
  -- The latest failure of a batch, cleared by the next batch that succeeds, so
  -- `projections status` shows a projection that is stuck and why.
  last_error    text,
  last_error_at timestamptz
);
