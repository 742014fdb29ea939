-- Operator accounts and their sessions (control server login).
CREATE TABLE accounts (
  username            text PRIMARY KEY,
  created_at          timestamptz NOT NULL,
  password_changed_at timestamptz
);

-- A session token is found by its sha256; the token itself is never stored.
CREATE TABLE account_sessions (
  session_id   text PRIMARY KEY,
  username     text NOT NULL,
  token_sha256 text NOT NULL UNIQUE,
  started_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz
);
CREATE INDEX account_sessions_username ON account_sessions (username) WHERE revoked_at IS NULL;
