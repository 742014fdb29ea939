-- Flap alerts (document 3, "Other flap records"): the fold of the `flap-alerts`
-- stream. Open alerts all, resolved ones the latest 500 (the projection prunes);
-- the events themselves stay in the stream.
CREATE TABLE flap_alerts (
  -- the stream version of the FlapAlertOpened event plus one
  alert_id    bigint PRIMARY KEY,
  kind        text NOT NULL CHECK (kind IN ('session', 'prefix')),
  alert_key   text NOT NULL,
  node_id     text,
  session     text,
  prefix      text,
  peer_asn    bigint,
  nodes       text[] NOT NULL,
  -- Of an open alert, as of scored_at: the alert job writes them on every evaluation
  -- (not events); the FlapAlertResolved event carries the final values.
  peak_score  double precision NOT NULL,
  last_score  double precision NOT NULL,
  scored_at   timestamptz NOT NULL,
  started_at  timestamptz NOT NULL,
  resolved_at timestamptz,
  resolution  text
);
-- One open alert per key: a second opening is a bug, refused by the database too.
CREATE UNIQUE INDEX flap_alerts_open_key ON flap_alerts (alert_key) WHERE resolved_at IS NULL;
CREATE INDEX flap_alerts_resolved ON flap_alerts (resolved_at DESC, alert_id DESC) WHERE resolved_at IS NOT NULL;

-- The stream version the table reflects (one row), so the alert job can tell a lagging read model.
CREATE TABLE flap_alerts_stream (
  one     boolean PRIMARY KEY DEFAULT true CHECK (one),
  version bigint NOT NULL
);
