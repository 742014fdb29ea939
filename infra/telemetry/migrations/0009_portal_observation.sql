-- Portal observation (issue 19, deliverable 5).
--
-- Route counts of each BGP session per address family, from the runtime
-- snapshots: one row per session and 5-minute bucket of the agent's time, the
-- newest snapshot of the bucket wins. Null: the agent did not report the count
-- (exported per family from agent 1.0.233 on; older agents report neither
-- family). Kept 60 days by the retention job.
CREATE TABLE session_route_counts (
  node_id      text        NOT NULL,
  session      text        NOT NULL,
  bucket       timestamptz NOT NULL,
  at           timestamptz NOT NULL,
  imported_v4  integer,
  imported_v6  integer,
  exported_v4  integer,
  exported_v6  integer,
  PRIMARY KEY (node_id, session, bucket)
);
CREATE INDEX session_route_counts_bucket ON session_route_counts (bucket);

-- The latest portal probe of each kind per autopeering request: the cooldown
-- (claimed_at, null when the probe could not start) and the last result shown
-- in the request detail (`mtu_probe`, `latency`).
CREATE TABLE portal_probe_runs (
  request_id   bigint      NOT NULL,
  kind         text        NOT NULL CHECK (kind IN ('mtu', 'latency')),
  claimed_at   timestamptz,
  result       jsonb,
  result_at    timestamptz,
  PRIMARY KEY (request_id, kind)
);
