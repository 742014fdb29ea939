-- Read models of the node streams and their desired-state generations.
-- Every value comes from an event, so a rebuild reproduces the rows exactly.
CREATE TABLE nodes (
  node_id            text PRIMARY KEY,
  fields             jsonb NOT NULL,
  lifecycle          text NOT NULL,
  current_generation integer NOT NULL DEFAULT 0,
  dns_group_id       integer,
  wireguard_public_key text,
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL
);
-- Which nodes name another one as an internal-topology router (affected-node lookup).
CREATE INDEX nodes_topology_routers ON nodes USING gin ((fields -> 'base_template' -> 'bird' -> 'internal_topology' -> 'routers'));

CREATE TABLE peerings (
  id             integer PRIMARY KEY,
  node_id        text NOT NULL,
  name           text NOT NULL,
  remote_asn     bigint NOT NULL,
  remote_node_id text,
  remote_label   text,
  is_internal    boolean NOT NULL,
  enabled        boolean NOT NULL,
  notes          text,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
);
CREATE INDEX peerings_node ON peerings (node_id, name);
CREATE INDEX peerings_remote ON peerings (remote_node_id) WHERE remote_node_id IS NOT NULL;

CREATE TABLE interfaces (
  id         integer PRIMARY KEY,
  node_id    text NOT NULL,
  peering_id integer,
  name       text NOT NULL,
  kind       text NOT NULL,
  enabled    boolean NOT NULL,
  sort_order integer NOT NULL,
  spec       jsonb NOT NULL
);
CREATE INDEX interfaces_node ON interfaces (node_id, sort_order, id);
CREATE INDEX interfaces_peering ON interfaces (peering_id) WHERE peering_id IS NOT NULL;

CREATE TABLE bgp_sessions (
  id         integer PRIMARY KEY,
  node_id    text NOT NULL,
  peering_id integer,
  name       text NOT NULL,
  remote_asn bigint NOT NULL,
  enabled    boolean NOT NULL,
  sort_order integer NOT NULL,
  spec       jsonb NOT NULL
);
CREATE INDEX bgp_sessions_node ON bgp_sessions (node_id, sort_order, id);
CREATE INDEX bgp_sessions_peering ON bgp_sessions (peering_id) WHERE peering_id IS NOT NULL;

CREATE TABLE generations (
  node_id     text NOT NULL,
  generation  integer NOT NULL,
  reason      text NOT NULL,
  state       jsonb NOT NULL,
  rollback_of integer,
  actor       text NOT NULL,
  request_id  text,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (node_id, generation)
);
CREATE INDEX generations_time ON generations (node_id, created_at);

-- Every event of a node's two streams, for auditors (snapshots left out: they are in `generations`).
CREATE TABLE node_history (
  tx          bigint NOT NULL,
  pos         bigint NOT NULL,
  node_id     text NOT NULL,
  type        text NOT NULL,
  data        jsonb NOT NULL,
  actor       text NOT NULL,
  request_id  text,
  recorded_at timestamptz NOT NULL,
  PRIMARY KEY (tx, pos)
);
CREATE INDEX node_history_node ON node_history (node_id, tx DESC, pos DESC);
