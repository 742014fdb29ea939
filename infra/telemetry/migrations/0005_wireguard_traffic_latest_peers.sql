-- The 30 s WireGuard traffic samples keep their sums over all peers as a time
-- series; the per-peer breakdown is kept for the latest two samples of each node
-- only (current rates per peer). Per-peer history is the per-interface archive of
-- the runtime snapshots (interface_traffic_samples); a second copy every 30 s was
-- most of the database's growth at fleet size (bench/README.md, telemetry-ingest).
CREATE TABLE wireguard_traffic_latest (
  node_id        text PRIMARY KEY,
  at             timestamptz NOT NULL,
  peers          jsonb NOT NULL,
  previous_at    timestamptz,
  previous_peers jsonb
);
INSERT INTO wireguard_traffic_latest (node_id, at, peers)
  SELECT DISTINCT ON (node_id) node_id, at, peers FROM wireguard_traffic_samples ORDER BY node_id, at DESC;
ALTER TABLE wireguard_traffic_samples DROP COLUMN peers;
