-- The flap-alert job's scores of open alerts (issue 30): what it measured at its last
-- evaluation, not events (one per alert per minute would flood the `flap-alerts`
-- stream). Its own table, so the projection's `flap_alerts` is written only by the
-- projection; the alert views read an open alert's scores from here when a row is
-- here, and a resolved alert's from the FlapAlertResolved event (flap_alerts).
-- Rows of alerts no longer open are removed by the job's next evaluation.
CREATE TABLE flap_alert_scores (
  -- flap_alerts.alert_id (no foreign key: a rebuild of the projection empties flap_alerts)
  alert_id   bigint PRIMARY KEY,
  nodes      text[] NOT NULL,
  -- The highest score the job measured while the alert was open; the views show the
  -- greater of it and the opening score.
  peak_score double precision NOT NULL,
  last_score double precision NOT NULL,
  scored_at  timestamptz NOT NULL
);
