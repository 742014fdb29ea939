-- `status_events` becomes `status_snapshots`: the name said "events", and these
-- rows are not the event store's. Each row keeps what its report changed
-- against a base, not the whole body again (a runtime snapshot is about 7 KB of
-- JSON, mostly the same names, keys and settings every minute):
-- `status_bases` holds the first body of each node and kind per UTC day, and a
-- row's body is its day's base with its `change` applied
-- (domain/telemetry/changes.ts). A base per day, not the previous row: any row
-- reads back from two rows, and dropping a day never cuts a chain. The latest
-- full body of each node stays in `node_status` (snapshot, report, apply).
--
-- Partitioned by UTC day like the samples (0030); ids continue from status_events'.

CREATE TABLE status_bases (
  node_id text NOT NULL,
  kind    text NOT NULL,
  day     date NOT NULL,   -- UTC day of the rows it is the base of
  body    jsonb NOT NULL,
  PRIMARY KEY (node_id, kind, day)
);

ALTER TABLE status_events RENAME TO status_events_unpartitioned;
ALTER TABLE status_events_unpartitioned ALTER COLUMN id DROP DEFAULT;
ALTER SEQUENCE status_events_id_seq RENAME TO status_snapshots_id_seq;
DROP INDEX status_events_node;
DROP INDEX status_events_node_kind;
DROP INDEX status_events_time;

CREATE TABLE status_snapshots (
  id          bigint NOT NULL DEFAULT nextval('status_snapshots_id_seq'),
  node_id     text NOT NULL,
  kind        text NOT NULL,
  generation  integer,
  status      text,
  drift_count integer,
  created_at  timestamptz NOT NULL,
  -- What the body changed against its day's base (status_bases); null for a row
  -- stored before this migration, which keeps its whole body in `body`.
  change      jsonb,
  body        jsonb,
  CHECK ((change IS NULL) <> (body IS NULL)),
  PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX status_snapshots_node ON status_snapshots (node_id, id DESC);
CREATE INDEX status_snapshots_node_kind ON status_snapshots (node_id, kind, id DESC);
CREATE INDEX status_snapshots_time ON status_snapshots USING brin (created_at);
CREATE TABLE status_snapshots_default PARTITION OF status_snapshots DEFAULT;

SELECT telemetry_partition_day('status_snapshots', 'created_at', d::date)
FROM generate_series(
  date_trunc('day', least((SELECT min(created_at) FROM status_events_unpartitioned), now()) AT TIME ZONE 'UTC'),
  greatest((SELECT max(created_at) FROM status_events_unpartitioned), now() + interval '2 days') AT TIME ZONE 'UTC',
  interval '1 day') AS d;

INSERT INTO status_snapshots (id, node_id, kind, generation, status, drift_count, created_at, body)
  SELECT id, node_id, kind, generation, status, drift_count, created_at, payload FROM status_events_unpartitioned;
ALTER SEQUENCE status_snapshots_id_seq OWNED BY status_snapshots.id;
DROP TABLE status_events_unpartitioned;
-- Retention removes the bases of days before the cutoff's day.
CREATE INDEX status_bases_day ON status_bases (day);
