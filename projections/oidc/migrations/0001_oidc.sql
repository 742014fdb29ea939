-- OAuth applications (issue 8). Deregistered applications keep their row, marked,
-- so a listing can show them and an id is never handed out twice.
CREATE TABLE oauth_clients (
  client_id       text PRIMARY KEY,
  name            text NOT NULL,
  redirect_uris   text[] NOT NULL,
  confidential    boolean NOT NULL,
  secret_sha256   text,
  registered_at   timestamptz NOT NULL,
  deregistered_at timestamptz
);

-- What the OIDC provider stores through its Adapter, one row per model instance.
-- `key` is the sha256 of the instance id (for opaque tokens the id is the token),
-- the payload is kept without its `jti`. Revoked and destroyed rows are deleted;
-- expired ones are pruned by the housekeeping job.
CREATE TABLE oidc_models (
  model          text NOT NULL,
  key            text NOT NULL,
  payload        jsonb NOT NULL,
  grant_id       text,
  client_id      text,
  uid_key        text,
  user_code_key  text,
  expires_at     timestamptz,
  consumed_at    timestamptz,
  PRIMARY KEY (model, key)
);
CREATE INDEX oidc_models_grant ON oidc_models (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oidc_models_client ON oidc_models (client_id) WHERE client_id IS NOT NULL;
CREATE INDEX oidc_models_uid ON oidc_models (model, uid_key) WHERE uid_key IS NOT NULL;
CREATE INDEX oidc_models_user_code ON oidc_models (model, user_code_key) WHERE user_code_key IS NOT NULL;
CREATE INDEX oidc_models_expiry ON oidc_models (expires_at) WHERE expires_at IS NOT NULL;

-- Approvals given on the authorization page: the identity behind each grant.
CREATE TABLE oidc_approvals (
  grant_id     text PRIMARY KEY,
  client_id    text NOT NULL,
  sub          text NOT NULL,
  mntner       text NOT NULL,
  asn          bigint NOT NULL,
  method       text NOT NULL,
  scope        text NOT NULL,
  resource     text[] NOT NULL,
  redirect_uri text NOT NULL,
  approved_at  timestamptz NOT NULL
);
