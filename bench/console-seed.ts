// The telemetry history of the console-cost benchmark, written in bulk SQL: what
// the agents' reports would have left after `days` days at their real intervals
// (runtime snapshot every 60 s, reconciliation report and routing table every
// 5 min, WireGuard traffic every 30 s), row for row as the report handlers write
// it (commands/telemetry.ts: infra/telemetry/store.ts and series.ts), so the
// latest reports can then go through the real HTTP endpoints and continue it.
//
// The traffic model: each interface of each node counts at a rate that is
// constant inside a 5-minute bucket (a daily wave times noise), so every snapshot
// interval (60 s, never crossing a 5-minute boundary) adds the same bytes to its
// bucket; the wider rollups (ROLLUP_WIDTHS) are sums of the 5-minute ones, which is what
// addSnapshotToSeries adds to them interval by interval. Counters are cumulative
// and never reset. spec/bench/console-seed.spec.ts replays a seeded node's
// snapshots and reports through addSnapshotToSeries/addReportToSeries and checks
// the rollups match.
import type pg from 'pg';
import { ROLLUP_WIDTHS } from '../domain/series/grid.js';
import type { RoutingTable } from '../domain/telemetry/reports.js';
import { summarizeRoutes } from '../domain/telemetry/routing.js';

/** The seeded span ends here: the last seeded snapshot is one minute before, the first report to post comes at `end`. */
export interface SeedWindow {
  /** Start of the history (a 5-minute boundary). */
  start: Date;
  /** The instant the real reports are posted at (a 5-minute boundary). */
  end: Date;
}

/** A node's WireGuard interfaces (counted in the series) and its other interfaces (archived only). */
export interface SeedNode {
  node_id: string;
  wireguard: readonly string[];
  /** The routing table the node reports every 5 minutes (its summary goes on every seeded observation). */
  routes: RoutingTable;
}

export const OTHER_INTERFACES = ['eth0', 'lo'] as const;
/** Counter value every interface starts the history at. */
const COUNTER_BASE = 1_000_000_000;
/** Share of reconciliation reports that failed. */
const FAILED_REPORTS = 0.01;

const BUCKET_S = 300;
/** The tables the history goes into. */
const SEEDED_TABLES = [
  'interface_traffic_samples',
  'self_metrics_samples',
  'interface_traffic_rollups',
  'node_series_rollups',
  'interface_counters_latest',
  'series_cursors',
  'wireguard_traffic_samples',
  'status_snapshots',
  'routing_observations',
  'routing_fleet_observations',
];
const noise = (salt: string) => `((hashint8(${salt}) & 65535) / 65536.0)`;
const epochOf = (column: string) => `extract(epoch FROM ${column})::bigint`;

/** A node's CPU percent and RSS bytes in a bucket (`i` node index, `b` bucket column). */
const CPU = (i: string, b: string) => `(0.5 + 4 * ${noise(`${i} * 7001 + ${epochOf(b)}`)})`;
const RSS = (i: string, b: string) => `(50e6 + 20e6 * ${noise(`${i} * 7013 + ${epochOf(b)}`)})::bigint`;
const FAILED = (i: string, b: string) => `(${noise(`${i} * 7027 + ${epochOf(b)}`)} < ${FAILED_REPORTS})`;

/**
 * Bytes per minute of interface `j` of node `i` in bucket `b`: a base rate of 20
 * to 220 kB/s, a daily wave (±60 %, phase by node) and ±15 % noise; twice an
 * integer, so a 30 s WireGuard sample sits on a whole number.
 */
function perMinute(i: string, j: string, b: string, salt: number): string {
  const base = `(20000 + ((${i} * 7919 + ${j} * 104729 + ${salt}) % 200000))`;
  const wave = `(1 + 0.6 * sin(2 * pi() * (${epochOf(b)} / 86400.0 + ${i} / 50.0)))`;
  return `(2 * floor(30 * ${base} * ${wave} * (0.85 + 0.3 * ${noise(`${i} * 1000003 + ${j} * 7919 + ${salt} + ${epochOf(b)}`)})))::bigint`;
}

export interface SeedFigures {
  rows: Record<string, number>;
  /** Seconds spent per table (the scratch table under `seed_buckets`, VACUUM ANALYZE under `vacuum`). */
  table_seconds: Record<string, number>;
  seconds: number;
}

/**
 * Writes the history of `nodes` over `window` through `client` (one connection:
 * the scratch table lives in its session). Every table the report handlers
 * write, except the latest-value rows (node_status, wireguard_traffic_latest,
 * routing_tables) the real reports then write. status_snapshots rows carry a small
 * whole body instead of the report's changes against a day's base (their count and indexes are real;
 * none of the measured endpoints reads the payload of history rows).
 */
export async function seedTelemetryHistory(client: pg.ClientBase, nodes: readonly SeedNode[], window: SeedWindow): Promise<SeedFigures> {
  const started = Date.now();
  const last = new Date(window.end.getTime() - BUCKET_S * 1000);
  await client.query(`SET synchronous_commit = off; SET work_mem = '256MB'; SET maintenance_work_mem = '256MB'`);
  // One row per node, interface and 5-minute bucket: bytes per minute and the counters at the bucket's first snapshot.
  await client.query(
    `CREATE TEMP TABLE seed_buckets AS
     WITH ifaces AS (
       SELECT n.node_id, n.i::int AS i, f.iface, f.j::int AS j, f.wg
       FROM unnest($1::text[], $2::int[]) AS n(node_id, i)
       JOIN unnest($3::text[], $4::text[], $5::bool[]) WITH ORDINALITY AS f(node_id, iface, wg, j) ON f.node_id = n.node_id
     ), rates AS (
       SELECT x.*, b, ${perMinute('x.i', 'x.j', 'b', 0)} AS md_rx, ${perMinute('x.i', 'x.j', 'b', 77)} AS md_tx,
         CASE WHEN b = $7 THEN 4 ELSE 5 END AS k
       FROM ifaces x, generate_series($6::timestamptz, $7::timestamptz, interval '5 minutes') AS b
     )
     SELECT *, ${COUNTER_BASE} + coalesce(sum(5 * md_rx) OVER w, 0) AS c_rx, ${COUNTER_BASE} + coalesce(sum(5 * md_tx) OVER w, 0) AS c_tx
     FROM rates WINDOW w AS (PARTITION BY i, j ORDER BY b ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)`,
    [
      nodes.map((n) => n.node_id),
      nodes.map((_, i) => i),
      nodes.flatMap((n) => [...n.wireguard, ...OTHER_INTERFACES].map(() => n.node_id)),
      nodes.flatMap((n) => [...n.wireguard, ...OTHER_INTERFACES]),
      nodes.flatMap((n) => [...n.wireguard.map(() => true), ...OTHER_INTERFACES.map(() => false)]),
      window.start,
      last,
    ],
  );
  await client.query(`ANALYZE seed_buckets`);
  // Secondary indexes are dropped during the load and built again after it (their definitions read from the
  // catalog, so they are exactly the migrations'): one sort per index instead of millions of random inserts.
  const { rows: indexes } = await client.query(
    `SELECT indexrelid::regclass::text AS name, pg_get_indexdef(indexrelid) AS definition FROM pg_index
     WHERE indrelid = ANY($1::regclass[]) AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conindid = indexrelid)`,
    [SEEDED_TABLES],
  );
  for (const index of indexes) await client.query(`DROP INDEX ${index.name}`);
  const rows: Record<string, number> = {};
  const tableSeconds: Record<string, number> = { seed_buckets: (Date.now() - started) / 1000 };
  const run = async (table: string, sql: string, params: unknown[] = []) => {
    const t0 = Date.now();
    const { rowCount } = await client.query(sql, params);
    rows[table] = (rows[table] ?? 0) + (rowCount ?? 0);
    tableSeconds[table] = (tableSeconds[table] ?? 0) + (Date.now() - t0) / 1000;
  };

  // Runtime snapshots: the interface archive (the bucket's first snapshot) and the self-metrics archive.
  await run(
    'interface_traffic_samples',
    `INSERT INTO interface_traffic_samples (node_id, interface, bucket, at, rx_bytes, tx_bytes) SELECT node_id, iface, b, b, c_rx, c_tx FROM seed_buckets ORDER BY node_id, iface, b`,
  );
  await run(
    'self_metrics_samples',
    `INSERT INTO self_metrics_samples (node_id, at, cpu_percent, rss_bytes, total_failures, log_warning_count, log_error_count, last_routing_collect_seconds, last_reresolve_seconds)
     SELECT node_id, b, ${CPU('i', 'b')}, ${RSS('i', 'b')}, 0, 1, 0, 0.4, 0.1 FROM (SELECT DISTINCT node_id, i, b FROM seed_buckets) s ORDER BY node_id, b`,
  );
  // The series: per WireGuard interface, and per node (traffic summed, self metrics of 5 snapshots, one report).
  await run(
    'interface_traffic_rollups',
    `INSERT INTO interface_traffic_rollups (width_s, node_id, bucket, interface, rx_bytes, tx_bytes, seconds)
     SELECT ${BUCKET_S}, node_id, b, iface, k * md_rx, k * md_tx, 60 * k FROM seed_buckets WHERE wg ORDER BY node_id, b, iface`,
  );
  await run(
    'node_series_rollups',
    `INSERT INTO node_series_rollups (width_s, node_id, bucket, rx_bytes, tx_bytes, traffic_seconds, cpu_sum, rss_sum, metric_samples, reports, report_failures)
     SELECT ${BUCKET_S}, node_id, b, sum(k * md_rx) FILTER (WHERE wg), sum(k * md_tx) FILTER (WHERE wg), 60 * min(k),
       5 * ${CPU('i', 'b')}, 5 * ${RSS('i', 'b')}, 5, 1, CASE WHEN ${FAILED('i', 'b')} THEN 1 ELSE 0 END
     FROM seed_buckets GROUP BY node_id, i, b ORDER BY node_id, b`,
  );
  // The wider rollups (1 h, 4 h, 1 day as of writing) from the 5-minute ones, as many as the series keeps.
  for (const width of ROLLUP_WIDTHS.filter((w) => w !== BUCKET_S)) {
    await run(
      'interface_traffic_rollups',
      `INSERT INTO interface_traffic_rollups (width_s, node_id, bucket, interface, rx_bytes, tx_bytes, seconds)
       SELECT $1::int, node_id, to_timestamp(floor(extract(epoch FROM bucket) / $1::int) * $1::int), interface, sum(rx_bytes), sum(tx_bytes), sum(seconds)
       FROM interface_traffic_rollups WHERE width_s = ${BUCKET_S} GROUP BY 2, 3, 4 ORDER BY 2, 3, 4`,
      [width],
    );
    await run(
      'node_series_rollups',
      `INSERT INTO node_series_rollups (width_s, node_id, bucket, rx_bytes, tx_bytes, traffic_seconds, cpu_sum, rss_sum, metric_samples, reports, report_failures)
       SELECT $1::int, node_id, to_timestamp(floor(extract(epoch FROM bucket) / $1::int) * $1::int), sum(rx_bytes), sum(tx_bytes), sum(traffic_seconds),
         sum(cpu_sum), sum(rss_sum), sum(metric_samples), sum(reports), sum(report_failures)
       FROM node_series_rollups WHERE width_s = ${BUCKET_S} GROUP BY 2, 3 ORDER BY 2, 3`,
      [width],
    );
  }
  // The base of the next snapshot's deltas, and the cursors of the last snapshot (a minute before `end`) and report (2.5 min before).
  await run(
    'interface_counters_latest',
    `INSERT INTO interface_counters_latest (node_id, interface, at, rx_bytes, tx_bytes)
     SELECT node_id, iface, b + interval '4 minutes', c_rx + 4 * md_rx, c_tx + 4 * md_tx FROM seed_buckets WHERE wg AND b = $1`,
    [last],
  );
  await run(
    'series_cursors',
    `INSERT INTO series_cursors (node_id, snapshot_at, report_at) SELECT node_id, $1::timestamptz + interval '4 minutes', $1::timestamptz + interval '150 seconds' FROM unnest($2::text[]) AS node_id`,
    [last, nodes.map((n) => n.node_id)],
  );
  // WireGuard traffic every 30 s: the sums of the peers' counters (one peer per WireGuard interface).
  await run(
    'wireguard_traffic_samples',
    `INSERT INTO wireguard_traffic_samples (node_id, at, rx_bytes, tx_bytes, peer_count)
     SELECT s.node_id, s.b + q * interval '30 seconds', s.c_rx + q * s.m_rx / 2, s.c_tx + q * s.m_tx / 2, s.peers
     FROM (SELECT node_id, b, sum(c_rx) AS c_rx, sum(c_tx) AS c_tx, sum(md_rx) AS m_rx, sum(md_tx) AS m_tx, count(*) AS peers FROM seed_buckets WHERE wg GROUP BY node_id, b) s,
       generate_series(0, 9) AS q
     ORDER BY s.node_id, 2`,
  );
  // Status events: a snapshot a minute, a reconciliation report every 5 minutes (ids in time order, like arrivals).
  await run(
    'status_snapshots',
    `INSERT INTO status_snapshots (node_id, kind, generation, status, drift_count, body, created_at)
     SELECT node_id, kind, 1, status, drift, '{"seeded":true}', at FROM (
       SELECT node_id, 'snapshot' AS kind, 'healthy' AS status, NULL::int AS drift, b + m * interval '1 minute' AS at FROM (SELECT DISTINCT node_id, b FROM seed_buckets) s, generate_series(0, 4) AS m
       UNION ALL
       SELECT node_id, 'report', CASE WHEN ${FAILED('i', 'b')} THEN 'failed' ELSE 'in_sync' END, 0, b + interval '150 seconds' FROM (SELECT DISTINCT node_id, i, b FROM seed_buckets) s
     ) e ORDER BY at, node_id`,
  );
  // Routing tables every 5 minutes: the observation rows with the table's summary and a small churn (the
  // routes of the latest table come from the real report), and the fleet's union once per 5-minute bucket
  // (inserted before the real reports, so theirs are the latest by `seq`; completeFleetRoutingHistory
  // gives them the fleet summary the real reports produce).
  await run(
    'routing_observations',
    `INSERT INTO routing_observations (node_id, captured_at, received_at, size, size_v4, size_v6, rpki_observed, summary, announced, withdrawn)
     SELECT s.node_id, b + interval '200 seconds', b + interval '201 seconds', t.size, t.size_v4, t.size_v6, true, t.summary,
       (hashint8(s.i * 7039 + ${epochOf('b')}) & 7), (hashint8(s.i * 7043 + ${epochOf('b')}) & 7)
     FROM (SELECT DISTINCT node_id, i, b FROM seed_buckets) s
     JOIN unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::jsonb[]) AS t(node_id, size, size_v4, size_v6, summary) ON t.node_id = s.node_id
     ORDER BY b, s.node_id`,
    [
      nodes.map((n) => n.node_id),
      nodes.map((n) => n.routes.routes.length),
      nodes.map((n) => n.routes.routes.filter((r) => !r.prefix.includes(':')).length),
      nodes.map((n) => n.routes.routes.filter((r) => r.prefix.includes(':')).length),
      nodes.map((n) => JSON.stringify(summarizeRoutes(n.routes))),
    ],
  );
  await run(
    'routing_fleet_observations',
    `INSERT INTO routing_fleet_observations (at, placed_at, received_at, size, size_v4, size_v6, summary)
     SELECT b, b + interval '200 seconds', b + interval '201 seconds', 0, 0, 0, '{}' FROM generate_series($1::timestamptz, $2::timestamptz, interval '5 minutes') AS b`,
    [window.start, last],
  );
  await client.query(`DROP TABLE seed_buckets`);
  const rebuild = Date.now();
  // A partitioned table's index reads `ON ONLY` (that table alone): built without it, it is built on every partition too.
  for (const index of indexes) await client.query(index.definition.replace(' ON ONLY ', ' ON '));
  tableSeconds.indexes = (Date.now() - rebuild) / 1000;
  const vacuum = Date.now();
  for (const table of Object.keys(rows)) await client.query(`VACUUM ANALYZE ${table}`);
  tableSeconds.vacuum = (Date.now() - vacuum) / 1000;
  return {
    rows,
    table_seconds: Object.fromEntries(Object.entries(tableSeconds).map(([k, v]) => [k, Math.round(v * 10) / 10])),
    seconds: (Date.now() - started) / 1000,
  };
}

/** The seeded fleet observations get the summary and sizes of the fleet's latest one (after the real reports). */
export async function completeFleetRoutingHistory(db: pg.Pool | pg.ClientBase): Promise<void> {
  await db.query(
    `UPDATE routing_fleet_observations h SET size = l.size, size_v4 = l.size_v4, size_v6 = l.size_v6, summary = l.summary
     FROM (SELECT * FROM routing_fleet_observations ORDER BY seq DESC LIMIT 1) l WHERE h.summary = '{}'::jsonb`,
  );
  await db.query(`VACUUM ANALYZE routing_fleet_observations`);
}

/** The counters the seeded history ends with (each node's WireGuard interfaces at its last seeded snapshot). */
export async function seededCounters(db: pg.Pool | pg.ClientBase): Promise<Map<string, Map<string, { rx: number; tx: number }>>> {
  const { rows } = await db.query(`SELECT node_id, interface, rx_bytes::float8 AS rx, tx_bytes::float8 AS tx FROM interface_counters_latest`);
  const out = new Map<string, Map<string, { rx: number; tx: number }>>();
  for (const r of rows) {
    if (!out.has(r.node_id)) out.set(r.node_id, new Map());
    out.get(r.node_id)!.set(r.interface, { rx: r.rx, tx: r.tx });
  }
  return out;
}
