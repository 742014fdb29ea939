-- Agent releases: files kept in PostgreSQL (not on local disk) so that every
-- instance serves them. A release is replaced whole when its version is uploaded again.
CREATE TABLE agent_releases (
  version text PRIMARY KEY,
  uploaded_at timestamptz NOT NULL
);

CREATE TABLE agent_release_files (
  version text NOT NULL REFERENCES agent_releases (version) ON DELETE CASCADE,
  filename text NOT NULL,
  sha256 text NOT NULL,
  size integer NOT NULL,
  content bytea NOT NULL,
  PRIMARY KEY (version, filename)
);

-- The global target version: at most one row.
CREATE TABLE agent_release_target (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  version text NOT NULL REFERENCES agent_releases (version),
  set_at timestamptz NOT NULL
);
