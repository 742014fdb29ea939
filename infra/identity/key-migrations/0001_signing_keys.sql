-- The identity service's Ed25519 signing keys, shared by every instance.
-- The private key is AES-256-GCM encrypted (IDENTITY_KEY_SECRET); `seq` orders
-- keys by creation independent of any clock: the highest unretired one signs.
CREATE TABLE identity_signing_keys (
  seq          bigserial PRIMARY KEY,
  kid          text NOT NULL UNIQUE,
  public_jwk   jsonb NOT NULL,
  private_key  bytea,
  created_at   timestamptz NOT NULL,
  retired_at   timestamptz
);
