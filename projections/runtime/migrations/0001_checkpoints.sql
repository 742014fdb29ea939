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
  rebuilt_at  timestamptz
);
