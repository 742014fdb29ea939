-- routing_observations partitioned by UTC day of `received_at`, like the samples
-- (0030): retention drops a day's partition instead of deleting its rows.
--
-- Its key becomes (id, received_at): a unique key of a partitioned table must
-- hold the partition key. The node's latest table keeps the received_at of its
-- observation next to the id, so reading the latest observations joins on both
-- and reads one partition per node instead of probing every day's.

ALTER TABLE routing_tables ADD COLUMN observation_received_at timestamptz;
UPDATE routing_tables t SET observation_received_at = o.received_at FROM routing_observations o WHERE o.id = t.observation_id;

ALTER TABLE routing_observations RENAME TO routing_observations_unpartitioned;
ALTER TABLE routing_observations_unpartitioned ALTER COLUMN id DROP DEFAULT;
ALTER INDEX routing_observations_pkey RENAME TO routing_observations_unpartitioned_pkey;
DROP INDEX routing_observations_node;
DROP INDEX routing_observations_time;
DROP INDEX routing_observations_node_captured;

CREATE TABLE routing_observations (
  id            bigint NOT NULL DEFAULT nextval('routing_observations_id_seq'),
  node_id       text NOT NULL,
  captured_at   timestamptz NOT NULL,
  received_at   timestamptz NOT NULL,
  size          integer NOT NULL,
  size_v4       integer NOT NULL,
  size_v6       integer NOT NULL,
  rpki_observed boolean NOT NULL,
  summary       jsonb,
  announced     integer,
  withdrawn     integer,
  PRIMARY KEY (id, received_at)
) PARTITION BY RANGE (received_at);
CREATE INDEX routing_observations_node ON routing_observations (node_id, id DESC);
CREATE INDEX routing_observations_node_captured ON routing_observations (node_id, captured_at);
CREATE INDEX routing_observations_time ON routing_observations USING brin (received_at);
CREATE TABLE routing_observations_default PARTITION OF routing_observations DEFAULT;

SELECT telemetry_partition_day('routing_observations', 'received_at', d::date)
FROM generate_series(
  date_trunc('day', least((SELECT min(received_at) FROM routing_observations_unpartitioned), now()) AT TIME ZONE 'UTC'),
  greatest((SELECT max(received_at) FROM routing_observations_unpartitioned), now() + interval '2 days') AT TIME ZONE 'UTC',
  interval '1 day') AS d;

INSERT INTO routing_observations (id, node_id, captured_at, received_at, size, size_v4, size_v6, rpki_observed, summary, announced, withdrawn)
  SELECT id, node_id, captured_at, received_at, size, size_v4, size_v6, rpki_observed, summary, announced, withdrawn FROM routing_observations_unpartitioned;
ALTER SEQUENCE routing_observations_id_seq OWNED BY routing_observations.id;
DROP TABLE routing_observations_unpartitioned;
