-- Prefix flap evidence (issue 18): the path and the changes since the node's previous
-- report, and when the key reached alert strength. All null for an older agent's
-- report or without a baseline: unknown, never 0.
ALTER TABLE prefix_flaps
  ADD COLUMN as_path       bigint[],
  ADD COLUMN announcements integer,
  ADD COLUMN withdrawals   integer,
  -- changes of this key since the node's previous report (announcements + withdrawals,
  -- or for an older agent the growth of `flaps` over the previous row); null: no baseline
  ADD COLUMN changes       integer,
  -- captured_at of the first report of the current run at score >= 100 (alert strength)
  ADD COLUMN alert_since   timestamptz;
