-- Time-series tables partitioned by day (PostgreSQL native range partitioning,
-- UTC days), so that retention drops a day's partition instead of deleting its
-- rows one by one (infra/telemetry/retention.ts): no dead rows, no vacuum debt,
-- the space goes back to the file system at once.
--
-- Each table has daily partitions `<table>_pYYYYMMDD` made ahead of time by the
-- telemetry job (`telemetry_partition_day`), and a default partition
-- `<table>_default` for rows of a day that has none (a late sample, a clock far
-- off): nothing is ever refused, and retention deletes old rows there as before.
-- A day whose rows already sit in the default partition gets no partition of
-- its own; it stays in the default one until retention takes it.

-- Makes the partition of one UTC day (unless it exists, or rows of that day
-- already sit in the default partition); true when the day has its partition.
CREATE FUNCTION telemetry_partition_day(p_parent text, p_key text, p_day date) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  v_name  text := p_parent || '_p' || to_char(p_day, 'YYYYMMDD');
  v_from  timestamptz := p_day::timestamp AT TIME ZONE 'UTC';
  v_to    timestamptz := (p_day + 1)::timestamp AT TIME ZONE 'UTC';
  v_taken boolean;
  v_timeout text := current_setting('lock_timeout');
BEGIN
  IF to_regclass(quote_ident(v_name)) IS NOT NULL THEN
    RETURN true;
  END IF;
  -- Two instances may make the same day at once: one waits for the other, then finds it made.
  PERFORM pg_advisory_xact_lock(hashtext('telemetry partition ' || v_name));
  IF to_regclass(quote_ident(v_name)) IS NOT NULL THEN
    RETURN true;
  END IF;
  EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I >= $1 AND %I < $2)', p_parent || '_default', p_key, p_key)
    INTO v_taken USING v_from, v_to;
  IF v_taken THEN
    RETURN false;
  END IF;
  -- Making a partition locks the whole table (ACCESS EXCLUSIVE) for a moment. Behind a
  -- long read it would queue every insert behind it: give up after a second instead,
  -- and the job tries again a minute later (partitions are made two days ahead).
  PERFORM set_config('lock_timeout', '1s', true);
  BEGIN
    EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)', v_name, p_parent, v_from, v_to);
  EXCEPTION WHEN lock_not_available THEN
    PERFORM set_config('lock_timeout', v_timeout, true);
    RETURN false;
  END;
  PERFORM set_config('lock_timeout', v_timeout, true);
  RETURN true;
END $$;

-- Drops every daily partition of `p_parent` that ends at or before `p_cutoff`;
-- returns the rows they held: the planner's count when the partition has been
-- analysed (autovacuum does, long before a day is 60 days old), else counted (a
-- count of a full day would cost about what the drop saves).
CREATE FUNCTION telemetry_drop_partitions_before(p_parent text, p_cutoff timestamptz) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
  v_part  text;
  v_rows  bigint;
  v_total bigint := 0;
BEGIN
  FOR v_part IN
    SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = p_parent::regclass
      AND c.relname ~ ('^' || p_parent || '_p[0-9]{8}$')
      AND (to_date(right(c.relname, 8), 'YYYYMMDD') + 1)::timestamp AT TIME ZONE 'UTC' <= p_cutoff
    ORDER BY c.relname
  LOOP
    SELECT CASE WHEN reltuples >= 0 THEN reltuples::bigint END INTO v_rows FROM pg_class WHERE oid = v_part::regclass;
    IF v_rows IS NULL THEN
      EXECUTE format('SELECT count(*) FROM %I', v_part) INTO v_rows;
    END IF;
    EXECUTE format('DROP TABLE %I', v_part);
    v_total := v_total + v_rows;
  END LOOP;
  RETURN v_total;
END $$;

-- Days to give partitions when a table is converted: every day it has rows of, and the next three.
-- (`p_old_key`: the time column of the table being converted).
CREATE FUNCTION telemetry_partition_days(p_parent text, p_key text, p_old_key text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_today date := (now() AT TIME ZONE 'UTC')::date;
  v_first date;
  v_last  date;
BEGIN
  EXECUTE format('SELECT (min(%I) AT TIME ZONE ''UTC'')::date, (max(%I) AT TIME ZONE ''UTC'')::date FROM %I', p_old_key, p_old_key, p_parent || '_unpartitioned')
    INTO v_first, v_last;
  v_first := least(coalesce(v_first, v_today), v_today);
  v_last := greatest(coalesce(v_last, v_today), v_today + 2);
  PERFORM telemetry_partition_day(p_parent, p_key, d::date) FROM generate_series(v_first, v_last, interval '1 day') AS d;
END $$;

-- WireGuard traffic sums, every 30 s per node.
ALTER TABLE wireguard_traffic_samples RENAME TO wireguard_traffic_samples_unpartitioned;
ALTER INDEX wireguard_traffic_samples_pkey RENAME TO wireguard_traffic_samples_unpartitioned_pkey;
DROP INDEX wireguard_traffic_samples_time;
CREATE TABLE wireguard_traffic_samples (
  node_id    text NOT NULL,
  at         timestamptz NOT NULL,
  rx_bytes   bigint NOT NULL,
  tx_bytes   bigint NOT NULL,
  peer_count integer NOT NULL,
  PRIMARY KEY (node_id, at)
) PARTITION BY RANGE (at);
-- Retention deletes rows before the cutoff in the one partition it does not drop;
-- rows come in time order, so a BRIN index finds them for a few kilobytes.
CREATE INDEX wireguard_traffic_samples_time ON wireguard_traffic_samples USING brin (at);
CREATE TABLE wireguard_traffic_samples_default PARTITION OF wireguard_traffic_samples DEFAULT;
SELECT telemetry_partition_days('wireguard_traffic_samples', 'at', 'at');
INSERT INTO wireguard_traffic_samples (node_id, at, rx_bytes, tx_bytes, peer_count)
  SELECT node_id, at, rx_bytes, tx_bytes, peer_count FROM wireguard_traffic_samples_unpartitioned;
DROP TABLE wireguard_traffic_samples_unpartitioned;

-- Per-interface traffic, one row per 5-minute bucket. The bucket becomes a column
-- (the partition key): a unique index on a partitioned table must contain the
-- key's columns, and "one row per bucket" is what it must keep unique.
ALTER TABLE interface_traffic_samples RENAME TO interface_traffic_samples_unpartitioned;
DROP INDEX interface_traffic_samples_bucket;
DROP INDEX interface_traffic_samples_time;
CREATE TABLE interface_traffic_samples (
  node_id   text NOT NULL,
  interface text NOT NULL,
  bucket    timestamptz NOT NULL,  -- date_bin('5 minutes', at, epoch)
  at        timestamptz NOT NULL,
  rx_bytes  bigint NOT NULL,
  tx_bytes  bigint NOT NULL,
  CHECK (bucket = date_bin('5 minutes', at, to_timestamp(0))),
  UNIQUE (node_id, interface, bucket)
) PARTITION BY RANGE (bucket);
CREATE INDEX interface_traffic_samples_time ON interface_traffic_samples USING brin (at);
CREATE TABLE interface_traffic_samples_default PARTITION OF interface_traffic_samples DEFAULT;
SELECT telemetry_partition_days('interface_traffic_samples', 'bucket', 'at');
INSERT INTO interface_traffic_samples (node_id, interface, bucket, at, rx_bytes, tx_bytes)
  SELECT node_id, interface, date_bin('5 minutes', at, to_timestamp(0)), at, rx_bytes, tx_bytes FROM interface_traffic_samples_unpartitioned;
DROP TABLE interface_traffic_samples_unpartitioned;

-- Traffic rollups per interface (5 minutes, 1 hour, 4 hours): every bucket lies
-- inside one UTC day (the widths divide a day).
ALTER TABLE interface_traffic_rollups RENAME TO interface_traffic_rollups_unpartitioned;
ALTER INDEX interface_traffic_rollups_pkey RENAME TO interface_traffic_rollups_unpartitioned_pkey;
DROP INDEX interface_traffic_rollups_time;
CREATE TABLE interface_traffic_rollups (
  width_s   integer NOT NULL,
  node_id   text NOT NULL,
  bucket    timestamptz NOT NULL,
  interface text NOT NULL,
  rx_bytes  double precision NOT NULL,
  tx_bytes  double precision NOT NULL,
  seconds   double precision NOT NULL,
  PRIMARY KEY (width_s, node_id, bucket, interface)
) PARTITION BY RANGE (bucket);
CREATE INDEX interface_traffic_rollups_time ON interface_traffic_rollups (width_s, bucket);
CREATE TABLE interface_traffic_rollups_default PARTITION OF interface_traffic_rollups DEFAULT;
SELECT telemetry_partition_days('interface_traffic_rollups', 'bucket', 'bucket');
INSERT INTO interface_traffic_rollups (width_s, node_id, bucket, interface, rx_bytes, tx_bytes, seconds)
  SELECT width_s, node_id, bucket, interface, rx_bytes, tx_bytes, seconds FROM interface_traffic_rollups_unpartitioned;
DROP TABLE interface_traffic_rollups_unpartitioned;

DROP FUNCTION telemetry_partition_days(text, text, text);
