-- The per-interface traffic archive and the self-metrics archive of runtime
-- snapshots keep one row per node (and interface) per 5-minute bucket: the first
-- snapshot of the bucket (counters are cumulative, so rates come from consecutive
-- rows and their real times). Document 2 serves "5-minute archive rows", the finest
-- grid document 3 draws is 5 minutes, and a row per minute was 5 times the storage
-- at fleet size (bench/README.md, telemetry-ingest). Finer rows already stored are
-- thinned to the first of their bucket.
DELETE FROM interface_traffic_samples s USING interface_traffic_samples e
  WHERE e.node_id = s.node_id AND e.interface = s.interface AND e.at < s.at
    AND date_bin('5 minutes', e.at, to_timestamp(0)) = date_bin('5 minutes', s.at, to_timestamp(0));
ALTER TABLE interface_traffic_samples DROP CONSTRAINT interface_traffic_samples_pkey;
CREATE UNIQUE INDEX interface_traffic_samples_bucket ON interface_traffic_samples (node_id, interface, date_bin('5 minutes', at, to_timestamp(0)));

DELETE FROM self_metrics_samples s USING self_metrics_samples e
  WHERE e.node_id = s.node_id AND e.at < s.at
    AND date_bin('5 minutes', e.at, to_timestamp(0)) = date_bin('5 minutes', s.at, to_timestamp(0));
ALTER TABLE self_metrics_samples DROP CONSTRAINT self_metrics_samples_pkey;
CREATE UNIQUE INDEX self_metrics_samples_bucket ON self_metrics_samples (node_id, date_bin('5 minutes', at, to_timestamp(0)));
