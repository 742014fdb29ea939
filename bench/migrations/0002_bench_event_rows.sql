-- Read model of the row-at-a-time projection: one row per event.
CREATE TABLE bench_event_rows (
  position  bigint PRIMARY KEY,
  stream_id text NOT NULL,
  type      text NOT NULL
);
