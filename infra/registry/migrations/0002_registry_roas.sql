-- ROAs derived from the route/route6 objects of the loaded commit (domain/rpki/roa.ts),
-- replaced with the other tables by each load.
CREATE TABLE registry_roas (
  prefix text NOT NULL, -- canonical (domain/rpki/roa.ts), RFC 5952 for IPv6
  max_length smallint NOT NULL,
  origin bigint NOT NULL,
  PRIMARY KEY (prefix, max_length, origin)
);

-- What a load wrote: a replica loaded by an older version (format 1, no ROAs) loads its
-- commit again on the next sync even when the upstream did not move.
ALTER TABLE registry_state ADD COLUMN load_format smallint NOT NULL DEFAULT 1;
-- The entity tag of the loaded ROA set (domain/rpki/roa.ts roaSetEtag); null for format 1.
ALTER TABLE registry_state ADD COLUMN roas_etag text;
