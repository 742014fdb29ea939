-- Document 3, prefix flap row: peer_asn is null for own origin or no attribution.
-- A primary key cannot hold a null, so the key becomes a unique index in which
-- null counts as one value (-1 is no AS number): one unattributed row per prefix.
ALTER TABLE prefix_flaps DROP CONSTRAINT prefix_flaps_pkey;
ALTER TABLE prefix_flaps ALTER COLUMN peer_asn DROP NOT NULL;
CREATE UNIQUE INDEX prefix_flaps_key ON prefix_flaps (node_id, prefix, COALESCE(peer_asn, -1));
