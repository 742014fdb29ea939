-- The notification outbox (issue 32): one row per notification to one channel.
-- Not a projection: rows carry delivery state (attempts, leases) that no event
-- holds, and a replay must not send again. `id` is the idempotency key the
-- receiver sees: the same on every attempt.
CREATE TABLE notify_outbox (
  id              text PRIMARY KEY,
  channel_id      text NOT NULL,
  subscription_id text,
  kind            text NOT NULL,
  severity        text NOT NULL,
  node_id         text,
  peer_asn        bigint,
  -- Suppression: repeats of (channel, group_key) within a window fold into the first row.
  group_key       text NOT NULL,
  title           text NOT NULL,
  -- The NotificationDocument sent (domain/notify/payload.ts).
  document        jsonb NOT NULL,
  -- queued: never tried; attempted: tried and to be retried; delivered; failed: gave up (24 h); cancelled: a pending
  -- session_down whose session came back.
  status          text NOT NULL CHECK (status IN ('queued', 'attempted', 'delivered', 'failed', 'cancelled')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  -- A claimed row belongs to one instance until the lease ends (kill -9: another instance takes it after).
  lease_until     timestamptz,
  leased_by       text,
  last_error      text,
  last_status     integer,
  suppressed      integer NOT NULL DEFAULT 0,
  -- A pending session_down is cancelled through this key when the session comes back.
  cancel_key      text,
  created_at      timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL,
  delivered_at    timestamptz
);
CREATE INDEX notify_outbox_due ON notify_outbox (next_attempt_at) WHERE status IN ('queued', 'attempted');
CREATE INDEX notify_outbox_channel ON notify_outbox (channel_id, created_at DESC);
CREATE INDEX notify_outbox_group ON notify_outbox (channel_id, group_key, created_at DESC);
CREATE INDEX notify_outbox_cancel ON notify_outbox (cancel_key) WHERE cancel_key IS NOT NULL AND status = 'queued';

-- Every attempt: the delivery log.
CREATE TABLE notify_attempts (
  attempt_id  bigserial PRIMARY KEY,
  outbox_id   text NOT NULL REFERENCES notify_outbox (id) ON DELETE CASCADE,
  channel_id  text NOT NULL,
  attempt     integer NOT NULL,
  at          timestamptz NOT NULL,
  ok          boolean NOT NULL,
  status_code integer,
  error       text,
  duration_ms integer NOT NULL,
  instance    text NOT NULL
);
CREATE INDEX notify_attempts_channel ON notify_attempts (channel_id, attempt_id DESC);

-- Per channel: consecutive failures (the pause rule) and the latest outcome.
CREATE TABLE notify_channel_state (
  channel_id           text PRIMARY KEY,
  consecutive_failures integer NOT NULL DEFAULT 0,
  last_error           text,
  last_failure_at      timestamptz,
  last_success_at      timestamptz
);

-- Where the signal subscriber stands in the event store (one row; locked FOR UPDATE SKIP LOCKED per batch).
CREATE TABLE notify_cursor (
  name       text PRIMARY KEY,
  tx         bigint NOT NULL,
  pos        bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The cursor starts where the store stands when the table is made: notifications are about what happens from
-- the deployment on (not the history), whether or not a notifier is running yet. (A writer that took its
-- transaction id before this statement and commits after it could be passed over: once, at the deployment.)
INSERT INTO notify_cursor (name, tx, pos)
SELECT 'signals',
       COALESCE((SELECT tx_id::text::bigint FROM events ORDER BY tx_id DESC, position DESC LIMIT 1), 0),
       COALESCE((SELECT position FROM events ORDER BY tx_id DESC, position DESC LIMIT 1), 0);
