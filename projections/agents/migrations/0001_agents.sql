-- Agent tokens, enrollment tokens and registrations (the agent channel's credentials).
-- Secrets are never stored: only the sha256 (hex) of each secret.

-- Every agent request resolves its Bearer here by primary key (token_id), then compares the hash.
CREATE TABLE agent_tokens (
  token_id      text PRIMARY KEY,
  node_id       text NOT NULL,
  agent_id      text,
  secret_sha256 text NOT NULL,
  issued_at     timestamptz NOT NULL,
  expires_at    timestamptz,
  revoked_at    timestamptz,
  rotated_from  text,
  replaced_by   text,
  -- Global position of the issuing event: the list order among tokens issued at the same instant.
  tx            bigint NOT NULL,
  pos           bigint NOT NULL
);
CREATE INDEX agent_tokens_node ON agent_tokens (node_id, issued_at, tx, pos);

CREATE TABLE enrollment_tokens (
  token_id      text PRIMARY KEY,
  secret_sha256 text NOT NULL UNIQUE,
  node_id       text,
  description   text,
  expires_at    timestamptz,
  used_at       timestamptz,
  used_by_registration text,
  created_at    timestamptz NOT NULL,
  tx            bigint NOT NULL,
  pos           bigint NOT NULL
);
CREATE INDEX enrollment_tokens_created ON enrollment_tokens (created_at, tx, pos);

CREATE TABLE registrations (
  registration_id     text PRIMARY KEY,
  node_id             text NOT NULL UNIQUE,
  status              text NOT NULL,
  hostname            text,
  inventory           jsonb,
  via                 text,
  enrollment_token_id text,
  client_address      text,
  requests            integer NOT NULL DEFAULT 0,
  first_seen_at       timestamptz NOT NULL,
  last_seen_at        timestamptz NOT NULL,
  decided_at          timestamptz,
  decided_by          text,
  note                text,
  agent_id            text,
  agent_token_id      text,
  accepted_at         timestamptz,
  tx                  bigint NOT NULL,
  pos                 bigint NOT NULL
);
CREATE INDEX registrations_status ON registrations (status, first_seen_at, tx, pos);
