-- The event store. `position` orders rows as they were inserted; `tx_id` is the
-- inserting transaction. Readers of the global order go by (tx_id, position) and
-- only read rows with tx_id below the oldest running transaction, so a transaction
-- that commits late can never land behind a reader's checkpoint.
CREATE TABLE events (
  position    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id    uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
  tx_id       xid8 NOT NULL DEFAULT pg_current_xact_id(),
  stream_id   text NOT NULL,
  version     integer NOT NULL,
  type        text NOT NULL,
  data        jsonb NOT NULL,
  metadata    jsonb NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream_id, version)
);

CREATE INDEX events_global_order ON events (tx_id, position);
CREATE INDEX events_type ON events (type);

-- One row per stream holding its current version: the row lock is what makes
-- expected-version checks of concurrent writers exact.
CREATE TABLE streams (
  stream_id text PRIMARY KEY,
  version   integer NOT NULL
);
