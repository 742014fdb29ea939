-- Telemetry: what agents report. Samples and reports are not events (see
-- ARCHITECTURE.md); transitions they reveal go to `node-status-<node_id>`.
-- Rows with a time column older than 60 days are deleted by the retention job.

-- Latest observation per node: the inputs of the health rules and the latest
-- snapshot, reconciliation report and apply result.
CREATE TABLE node_status (
  node_id                text PRIMARY KEY,
  -- The health last recorded as a NodeHealthChanged event (the job compares against it).
  health                 text NOT NULL DEFAULT 'unknown',
  snapshot               jsonb,
  snapshot_received_at   timestamptz,
  snapshot_generation    integer,
  bgp_total              integer NOT NULL DEFAULT 0,
  bgp_established        integer NOT NULL DEFAULT 0,
  containers_not_running integer NOT NULL DEFAULT 0,
  report                 jsonb,
  report_status          text,
  report_received_at     timestamptz,
  apply                  jsonb,
  apply_status           text,
  apply_received_at      timestamptz,
  updated_at             timestamptz NOT NULL
);

-- One row per report (kinds snapshot, report, apply, reresolve), newest first by id.
CREATE TABLE status_events (
  id          bigserial PRIMARY KEY,
  node_id     text NOT NULL,
  kind        text NOT NULL,
  generation  integer,
  status      text,
  drift_count integer,
  payload     jsonb NOT NULL,
  created_at  timestamptz NOT NULL
);
CREATE INDEX status_events_node ON status_events (node_id, id DESC);
CREATE INDEX status_events_node_kind ON status_events (node_id, kind, id DESC);
CREATE INDEX status_events_time ON status_events (created_at);

-- Per-interface counters from runtime snapshots (cumulative bytes).
CREATE TABLE interface_traffic_samples (
  node_id   text NOT NULL,
  interface text NOT NULL,
  at        timestamptz NOT NULL,
  rx_bytes  bigint NOT NULL,
  tx_bytes  bigint NOT NULL,
  PRIMARY KEY (node_id, interface, at)
);
CREATE INDEX interface_traffic_samples_time ON interface_traffic_samples (at);

-- The agent's own health, from runtime snapshots.
CREATE TABLE self_metrics_samples (
  node_id                      text NOT NULL,
  at                           timestamptz NOT NULL,
  cpu_percent                  double precision NOT NULL,
  rss_bytes                    bigint NOT NULL,
  total_failures               integer NOT NULL,
  log_warning_count            integer NOT NULL,
  log_error_count              integer NOT NULL,
  last_error_at                timestamptz,
  last_error_message           text,
  last_routing_collect_seconds double precision,
  last_reresolve_seconds       double precision,
  PRIMARY KEY (node_id, at)
);
CREATE INDEX self_metrics_samples_time ON self_metrics_samples (at);

-- 30 s light traffic samples: sums over all WireGuard peers (cumulative bytes).
CREATE TABLE wireguard_traffic_samples (
  node_id    text NOT NULL,
  at         timestamptz NOT NULL,
  rx_bytes   bigint NOT NULL,
  tx_bytes   bigint NOT NULL,
  peer_count integer NOT NULL,
  peers      jsonb NOT NULL,
  PRIMARY KEY (node_id, at)
);
CREATE INDEX wireguard_traffic_samples_time ON wireguard_traffic_samples (at);

-- Routing table observations: a summary row each (trend), the routes of the latest only.
CREATE TABLE routing_observations (
  id          bigserial PRIMARY KEY,
  node_id     text NOT NULL,
  captured_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL,
  size        integer NOT NULL,
  size_v4     integer NOT NULL,
  size_v6     integer NOT NULL,
  rpki_observed boolean NOT NULL
);
CREATE INDEX routing_observations_node ON routing_observations (node_id, id DESC);
CREATE INDEX routing_observations_time ON routing_observations (received_at);

CREATE TABLE routing_tables (
  node_id        text PRIMARY KEY,
  observation_id bigint NOT NULL,
  captured_at    timestamptz NOT NULL,
  rpki_observed  boolean NOT NULL,
  routes         jsonb NOT NULL
);

-- Prefix flap scores: each report replaces the node's rows.
CREATE TABLE prefix_flaps (
  node_id      text NOT NULL,
  prefix       text NOT NULL,
  peer_asn     bigint NOT NULL,
  origin_asn   bigint,
  score        double precision NOT NULL,
  flaps        integer,
  last_flap_at timestamptz,
  captured_at  timestamptz NOT NULL,
  PRIMARY KEY (node_id, prefix, peer_asn)
);

CREATE TABLE prefix_flap_feeds (
  node_id     text PRIMARY KEY,
  feed_state  text NOT NULL,
  entries     integer NOT NULL,
  captured_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL
);
