-- Autopeering read models: node policies (from the node streams) and requests
-- (from the autopeer-request-<id> streams). Every value comes from an event.

-- One row per node whose policy was ever set; a node without a row has the defaults.
-- The row goes with NodeDeleted, so a node id created again starts closed.
CREATE TABLE autopeering_policies (
  node_id    text PRIMARY KEY,
  policy     jsonb NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Requests are kept after cancellation (audit); the record holds what was asked and handed out.
CREATE TABLE autopeering_requests (
  id            bigint PRIMARY KEY,
  node_id       text NOT NULL,
  asn           bigint NOT NULL,
  mntner        text,
  status        text NOT NULL,
  peering_id    integer NOT NULL,
  form          text NOT NULL,
  cancelled_by  text,
  reject_reason text,
  record        jsonb NOT NULL,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL
);
CREATE INDEX autopeering_requests_status ON autopeering_requests (status, id DESC);
CREATE INDEX autopeering_requests_node ON autopeering_requests (node_id, status);
CREATE INDEX autopeering_requests_asn ON autopeering_requests (asn, id DESC);
CREATE INDEX autopeering_requests_peering ON autopeering_requests (peering_id) WHERE status = 'provisioned';
