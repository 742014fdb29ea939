-- Probe and log-view jobs (document 3, "Probes and logs"): short-lived state
-- shared by every instance, so the browser may stream from another instance
-- than the one the agent's job stream reached. Not events: rows are deleted
-- once a job has expired.
CREATE TABLE ui_jobs (
  id          text PRIMARY KEY,
  kind        text NOT NULL CHECK (kind IN ('probe', 'log')),
  node_id     text NOT NULL,
  spec        jsonb NOT NULL,
  status      text NOT NULL CHECK (status IN ('waiting', 'running', 'done')),
  run_ms      integer NOT NULL,
  created_at  timestamptz NOT NULL,
  -- waiting: the agent must connect before it; running: the job must end before it
  deadline    timestamptz NOT NULL,
  attached_at timestamptz,
  done_at     timestamptz,
  last_seq    integer NOT NULL DEFAULT 0
);
CREATE INDEX ui_jobs_open ON ui_jobs (node_id) WHERE status <> 'done';

CREATE TABLE ui_job_messages (
  job_id text NOT NULL REFERENCES ui_jobs (id) ON DELETE CASCADE,
  seq    integer NOT NULL,
  event  text NOT NULL,
  data   jsonb NOT NULL,
  PRIMARY KEY (job_id, seq)
);
