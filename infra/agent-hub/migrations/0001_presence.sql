-- Presence of agent WebSocket connections across server instances.
-- Each instance keeps a row with a heartbeat (database clock); its connections
-- count only while that heartbeat is fresh, so a crashed instance's rows expire
-- (and the next live instance's sweep deletes them, connections by cascade).
CREATE TABLE agent_hub_instances (
  instance_id uuid PRIMARY KEY,
  started_at timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE agent_connections (
  connection_id uuid PRIMARY KEY,
  instance_id uuid NOT NULL REFERENCES agent_hub_instances (instance_id) ON DELETE CASCADE,
  node_id text NOT NULL,
  connected_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agent_connections_node ON agent_connections (node_id);
CREATE INDEX agent_connections_instance ON agent_connections (instance_id);

-- Doorbells too large for one NOTIFY payload (8000 bytes): the payload is stored
-- here and the notification carries its id. Rows are swept after a few minutes.
CREATE TABLE doorbell_payloads (
  id bigserial PRIMARY KEY,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- "Once per target": an `agent_update_available` offer already made to a node for
-- a version. Shared by instances and kept across reconnects.
CREATE TABLE agent_update_offers (
  node_id text NOT NULL,
  version text NOT NULL,
  offered_at timestamptz NOT NULL,
  PRIMARY KEY (node_id, version)
);
