-- The registry replica: a cache of one upstream commit, replaced as a whole by
-- each sync inside one transaction (see infra/registry/load.ts).

CREATE TABLE registry_state (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  commit text NOT NULL,
  counts jsonb NOT NULL,
  synced_at timestamptz NOT NULL,
  checked_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  forced boolean NOT NULL,
  previous_commit text,
  -- False between the load's commit and the append of its RegistrySynced event:
  -- a crash there is repaired by the next sync, which appends the missing event.
  recorded boolean NOT NULL
);

CREATE TABLE registry_aut_nums (
  asn bigint PRIMARY KEY,
  as_name text,
  descr text,
  mnt_by text[] NOT NULL,
  admin_c text[] NOT NULL,
  tech_c text[] NOT NULL,
  org text
);

CREATE TABLE registry_mntners (
  name text PRIMARY KEY,
  descr text,
  mnt_by text[] NOT NULL,
  admin_c text[] NOT NULL,
  tech_c text[] NOT NULL,
  auth text[] NOT NULL
);

-- PGP and SSH options per maintainer, in auth-line order.
CREATE TABLE registry_auth_options (
  mntner text NOT NULL,
  ordinal integer NOT NULL,
  id text NOT NULL,
  kind text NOT NULL,
  method text NOT NULL,
  value text NOT NULL,
  comment text NOT NULL,
  hardware_key boolean NOT NULL,
  PRIMARY KEY (mntner, ordinal)
);

CREATE TABLE registry_contacts (
  handle text PRIMARY KEY,
  kind text NOT NULL,
  name text,
  emails text[] NOT NULL
);

CREATE TABLE registry_key_certs (
  name text PRIMARY KEY,
  fingerprint text,
  method text,
  owner text[] NOT NULL,
  armor text NOT NULL,
  mnt_by text[] NOT NULL
);
CREATE INDEX registry_key_certs_fingerprint ON registry_key_certs (fingerprint);

-- One row per (prefix, origin); a route object with no origin has no row.
CREATE TABLE registry_routes (
  prefix inet NOT NULL,
  family smallint NOT NULL,
  origin bigint NOT NULL,
  PRIMARY KEY (origin, prefix)
);

CREATE INDEX registry_aut_nums_mnt_by ON registry_aut_nums USING gin (mnt_by);
