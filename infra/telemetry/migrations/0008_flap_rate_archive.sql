-- Flap-rate archive (document 3, flap-stats; Limits: 60 s resolution, 60 days): one
-- row per minute of the server clock. The changes columns are summed over the prefix
-- flap reports received in the minute from feeds in state established (null: no such
-- report, a gap; 0: measured quiet); the point-in-time columns are the alert job's
-- sample of the minute (null: the job did not run in it).
CREATE TABLE flap_rate_minutes (
  minute            timestamptz PRIMARY KEY,
  reports           integer NOT NULL DEFAULT 0,
  changes           bigint,
  listed_changes    bigint,
  tracked_prefixes  integer,
  flapping_prefixes integer,
  flapping_sessions integer,
  open_alerts       integer
);
