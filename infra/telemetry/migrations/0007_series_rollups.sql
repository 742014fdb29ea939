-- Rollups of the console's time series (docs/decisions.md, "Console layer"),
-- next to the raw samples: per 5 minutes, 1 hour and 4 hours (`width_s`), bucket
-- starts aligned to multiples of the width since the epoch. A trend reads the
-- widest rollup that divides its bucket width, so a 30-day trend reads 180 rows
-- per series. Kept 60 days like the samples (retention job, by `bucket`).

-- The newest snapshot and reconciliation report each node's series took (agent
-- time): a report at or before it is a retry or out of order and adds nothing.
-- Its row lock orders a node's concurrent snapshots.
CREATE TABLE series_cursors (
  node_id     text PRIMARY KEY,
  snapshot_at timestamptz,
  report_at   timestamptz
);

-- The WireGuard interface counters of each node's newest snapshot (cumulative
-- bytes): the next snapshot's deltas are taken against them.
CREATE TABLE interface_counters_latest (
  node_id   text NOT NULL,
  interface text NOT NULL,
  at        timestamptz NOT NULL,
  rx_bytes  bigint NOT NULL,
  tx_bytes  bigint NOT NULL,
  PRIMARY KEY (node_id, interface)
);

-- Bytes each WireGuard interface counted inside a bucket and the seconds of the
-- bucket that were measured (rate = bytes / seconds; no row = not measured).
CREATE TABLE interface_traffic_rollups (
  width_s   integer NOT NULL,
  node_id   text NOT NULL,
  bucket    timestamptz NOT NULL,
  interface text NOT NULL,
  rx_bytes  double precision NOT NULL,
  tx_bytes  double precision NOT NULL,
  seconds   double precision NOT NULL,
  PRIMARY KEY (width_s, node_id, bucket, interface)
);
CREATE INDEX interface_traffic_rollups_time ON interface_traffic_rollups (width_s, bucket);

-- Per node and bucket: traffic summed over its WireGuard interfaces, the self
-- metrics of its snapshots (sums and count, for averages) and its reconciliation
-- reports (count and failures).
CREATE TABLE node_series_rollups (
  width_s         integer NOT NULL,
  node_id         text NOT NULL,
  bucket          timestamptz NOT NULL,
  rx_bytes        double precision NOT NULL DEFAULT 0,
  tx_bytes        double precision NOT NULL DEFAULT 0,
  traffic_seconds double precision NOT NULL DEFAULT 0,
  cpu_sum         double precision NOT NULL DEFAULT 0,
  rss_sum         double precision NOT NULL DEFAULT 0,
  metric_samples  integer NOT NULL DEFAULT 0,
  reports         integer NOT NULL DEFAULT 0,
  report_failures integer NOT NULL DEFAULT 0,
  PRIMARY KEY (width_s, node_id, bucket)
);
CREATE INDEX node_series_rollups_time ON node_series_rollups (width_s, bucket);
