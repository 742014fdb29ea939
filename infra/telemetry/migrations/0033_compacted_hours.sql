-- Compacted hours (infra/telemetry/compaction.ts): the ingest keeps inserting
-- one cheap row per sample into the tables it writes today; the telemetry job
-- folds every closed period of them into one row per series and period, whose
-- arrays hold the period's values, and deletes the rows it folded, in one
-- transaction. A row costs about 60 bytes of header, item pointer and index
-- entries whatever it holds: paid once an hour instead of 120 times.
--
-- Reads take the compacted rows and the raw rows not yet folded, and answer
-- what the raw rows alone answered. Cumulative counters and times are stored as
-- differences to the previous value of the array (the first as is, see
-- `telemetry_undelta`): small numbers, which TOAST compresses to a few bytes.
--
-- Partitioned by UTC day like the tables they compact (0030); retention drops
-- their partitions the same way.

-- The running sum of `d`: the array back from its differences.
CREATE FUNCTION telemetry_undelta(d bigint[]) RETURNS bigint[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(s ORDER BY o), '{}') FROM (SELECT (sum(v) OVER (ORDER BY o))::bigint AS s, o FROM unnest(d) WITH ORDINALITY AS u(v, o)) x
$$;
-- Each value minus the one before it (the first as is).
CREATE FUNCTION telemetry_delta(v bigint[]) RETURNS bigint[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(x - coalesce(p, 0) ORDER BY o), '{}') FROM (SELECT x, o, lag(x) OVER (ORDER BY o) AS p FROM unnest(v) WITH ORDINALITY AS u(x, o)) y
$$;
-- Microseconds of `t` after `base`, and back.
CREATE FUNCTION telemetry_us(t timestamptz, base timestamptz) RETURNS bigint LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT (extract(epoch FROM t - base) * 1000000)::bigint
$$;

-- WireGuard traffic sums (every 30 s): one row per node and hour.
CREATE TABLE wireguard_traffic_hours (
  node_id    text NOT NULL,
  hour       timestamptz NOT NULL,
  at_us      bigint[] NOT NULL,   -- differences of microseconds after `hour`, ascending
  rx_bytes   bigint[] NOT NULL,   -- differences
  tx_bytes   bigint[] NOT NULL,   -- differences
  peer_count integer[] NOT NULL,
  PRIMARY KEY (node_id, hour)
) PARTITION BY RANGE (hour);
CREATE TABLE wireguard_traffic_hours_default PARTITION OF wireguard_traffic_hours DEFAULT;

-- The per-interface 5-minute archive: one row per node and hour, interface by
-- interface (`interface` repeats the name per value), each ascending in time.
CREATE TABLE interface_traffic_hours (
  node_id   text NOT NULL,
  hour      timestamptz NOT NULL,
  interface text[] NOT NULL,
  at_us     bigint[] NOT NULL,    -- differences of microseconds after `hour`
  rx_bytes  bigint[] NOT NULL,    -- differences
  tx_bytes  bigint[] NOT NULL,    -- differences
  PRIMARY KEY (node_id, hour)
) PARTITION BY RANGE (hour);
CREATE TABLE interface_traffic_hours_default PARTITION OF interface_traffic_hours DEFAULT;

-- Interface traffic rollups: one row per width, node and period (an hour for
-- the 5-minute and hourly buckets, the bucket itself for 4 hours and a day),
-- holding every (interface, bucket) of the period. Sums, not counters: a bucket
-- may appear twice (a contribution that came after its period was folded) and
-- reads add them up, as they add up raw rows.
CREATE TABLE interface_traffic_rollup_periods (
  width_s   integer NOT NULL,
  node_id   text NOT NULL,
  period    timestamptz NOT NULL,
  interface text[] NOT NULL,
  bucket_s  integer[] NOT NULL,   -- seconds after `period`
  rx_bytes  double precision[] NOT NULL,
  tx_bytes  double precision[] NOT NULL,
  seconds   double precision[] NOT NULL,
  PRIMARY KEY (width_s, node_id, period)
) PARTITION BY RANGE (period);
CREATE INDEX interface_traffic_rollup_periods_time ON interface_traffic_rollup_periods (width_s, period);
CREATE TABLE interface_traffic_rollup_periods_default PARTITION OF interface_traffic_rollup_periods DEFAULT;

-- Status snapshots: one row per node, kind and hour. The lean fields per
-- snapshot in arrays (ids and times as differences); `changes` is a JSON array
-- of each body's change against the body before it in the row (the first
-- against its day's base, status_bases, when `based`, else against nothing),
-- see status-compaction.ts. `ids` as they are: the full event view finds an id
-- by the range index, then `= ANY(ids)`.
CREATE TABLE status_snapshot_hours (
  node_id       text NOT NULL,
  kind          text NOT NULL,
  hour          timestamptz NOT NULL,
  first_id      bigint NOT NULL,
  last_id       bigint NOT NULL,
  ids           bigint[] NOT NULL,     -- ascending
  based         boolean NOT NULL,
  created_us    bigint[] NOT NULL,     -- differences of microseconds after `hour`
  generation    integer[] NOT NULL,
  status        text[] NOT NULL,
  drift_count   integer[] NOT NULL,
  changes       json NOT NULL,
  PRIMARY KEY (node_id, kind, hour)
) PARTITION BY RANGE (hour);
CREATE INDEX status_snapshot_hours_node ON status_snapshot_hours (node_id, last_id DESC);
CREATE INDEX status_snapshot_hours_node_kind ON status_snapshot_hours (node_id, kind, last_id DESC);
CREATE INDEX status_snapshot_hours_ids ON status_snapshot_hours USING gist (int8range(first_id, last_id, '[]'));
CREATE TABLE status_snapshot_hours_default PARTITION OF status_snapshot_hours DEFAULT;

SELECT telemetry_partition_day(t, 'hour', d::date)
FROM unnest(ARRAY['wireguard_traffic_hours', 'interface_traffic_hours', 'status_snapshot_hours']) AS t,
  generate_series(now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC' + interval '2 days', interval '1 day') AS d;
SELECT telemetry_partition_day('interface_traffic_rollup_periods', 'period', d::date)
FROM generate_series(now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC' + interval '2 days', interval '1 day') AS d;

-- A routing observation's summary is read only for the node's latest table:
-- it moves to routing_tables (one per node, replaced with each table) and new
-- observations keep none (older ones keep theirs until retention takes them).
ALTER TABLE routing_tables ADD COLUMN summary jsonb;
UPDATE routing_tables t SET summary = o.summary FROM routing_observations o
WHERE o.id = t.observation_id AND o.received_at = t.observation_received_at;
-- Nothing reads observations by (node_id, id): the timeline reads (node_id, captured_at).
DROP INDEX routing_observations_node;

-- Latest-value tables, updated in place every minute or replaced every 5
-- minutes per node: room on each page for the new version (a HOT update needs
-- no new index entry), and vacuum after a few percent of dead rows instead of
-- the default 20 %, so that their size follows the fleet.
ALTER TABLE node_status SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 200, autovacuum_analyze_scale_factor = 0.05);
ALTER TABLE wireguard_traffic_latest SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 200);
ALTER TABLE series_cursors SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 200);
ALTER TABLE routing_tables SET (fillfactor = 70, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 200);
ALTER TABLE interface_counters_latest SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);
ALTER TABLE routing_routes SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 10000, autovacuum_vacuum_cost_delay = 0);
