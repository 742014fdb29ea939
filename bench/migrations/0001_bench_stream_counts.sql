-- Read model of the rebuild benchmark's trivial projection: events per stream,
-- with the type and position of the stream's last event.
CREATE TABLE bench_stream_counts (
  stream_id     text PRIMARY KEY,
  events        integer NOT NULL,
  last_type     text NOT NULL,
  last_position bigint NOT NULL
);
