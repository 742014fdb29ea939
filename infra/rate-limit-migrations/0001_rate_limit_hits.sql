-- One row per (pool, key): the times of its most recent hits (at most limit + 1,
-- older ones than the pool's window are dropped on every write). One row per key
-- lets concurrent writers serialise on the row lock of an upsert.
CREATE TABLE rate_limit_hits (
  pool text NOT NULL,
  key text NOT NULL,
  hits timestamptz[] NOT NULL,
  PRIMARY KEY (pool, key)
);
