-- Notification channels and their subscriptions (issue 32): the fold of the
-- `notify-channel-<id>` streams. Secrets of webhooks are kept here because the
-- deliverer signs with them; the API shows a secret only when it is made.
CREATE TABLE notify_channels (
  channel_id     text PRIMARY KEY,
  -- null: an operators' channel; else the peer AS that owns it (the portal).
  owner_asn      bigint,
  name           text NOT NULL,
  type           text NOT NULL CHECK (type IN ('webhook', 'email')),
  url            text,
  payload        text CHECK (payload IN ('json', 'text')),
  secret         text,
  address        text,
  confirmed      boolean NOT NULL,
  code_hash      text,
  code_expires_at timestamptz,
  paused         boolean NOT NULL DEFAULT false,
  paused_at      timestamptz,
  pause_reason   text,
  pause_automatic boolean NOT NULL DEFAULT false,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
);
CREATE INDEX notify_channels_owner ON notify_channels (owner_asn, created_at);

CREATE TABLE notify_subscriptions (
  subscription_id text PRIMARY KEY,
  channel_id      text NOT NULL REFERENCES notify_channels (channel_id) ON DELETE CASCADE,
  kinds           text[] NOT NULL,
  node_ids        text[] NOT NULL,
  min_severity    text NOT NULL,
  repeat_window_s integer NOT NULL,
  down_after_s    integer NOT NULL,
  created_at      timestamptz NOT NULL
);
CREATE INDEX notify_subscriptions_channel ON notify_subscriptions (channel_id);
