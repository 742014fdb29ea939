-- Liveness registry: the last heartbeat of each node's agent, shared by every
-- instance (the WebSocket may be connected to any of them). Not an event: a
-- heartbeat every 30 s per node is a sample, not a decision.
CREATE TABLE IF NOT EXISTS agent_liveness (
  node_id text PRIMARY KEY,
  agent_version text,
  applied_generation integer,
  apply_status text,
  last_seen timestamptz NOT NULL
);
