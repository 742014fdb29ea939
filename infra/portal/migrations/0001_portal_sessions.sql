-- Portal sessions (document 3, "Session identities of the portal"): their own
-- trust domain, apart from admin accounts. Tokens and handoff codes are kept only
-- as sha256; the upstream OIDC tokens stay here, server-side, and never leave.
CREATE TABLE portal_sessions (
  id text PRIMARY KEY,
  -- null until the handoff exchange issues the token (the callback never shows one)
  token_sha256 text UNIQUE,
  handoff_sha256 text UNIQUE,
  handoff_expires_at timestamptz,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  sub text NOT NULL,
  asn bigint,
  mnt text,
  route text[] NOT NULL DEFAULT '{}',
  route6 text[] NOT NULL DEFAULT '{}',
  claims jsonb NOT NULL DEFAULT '{}',
  claims_at timestamptz NOT NULL,
  access_token text,
  access_expires_at timestamptz,
  refresh_token text
);
CREATE INDEX portal_sessions_expires ON portal_sessions (expires_at);

-- Login transactions: state, nonce and PKCE verifier between /auth/login and the callback; one use.
CREATE TABLE portal_login_transactions (
  state_sha256 text PRIMARY KEY,
  nonce text NOT NULL,
  code_verifier text NOT NULL,
  next text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX portal_login_transactions_expires ON portal_login_transactions (expires_at);
