-- The current observed state of each node: the fold of its `node-status-<node_id>`
-- stream (NodeHealthChanged, BgpSessionStateChanged). Telemetry commands decide the
-- next transitions from this row instead of replaying the stream.
CREATE TABLE node_status_current (
  node_id  text PRIMARY KEY,
  health   text NOT NULL,
  -- Session name -> BGP state; a session that went `absent` is removed.
  sessions jsonb NOT NULL,
  -- Stream version (0-based) of the last event folded in: the expected version of the next append.
  version  integer NOT NULL
);
