import { trafficContributions, type CounterReading } from '../../domain/series/counters.js';
import { ROLLUP_WIDTHS } from '../../domain/series/grid.js';
import type { RuntimeSnapshot } from '../../domain/telemetry/reports.js';
import { withTransaction, type Pool, type Queryable } from '../db/pool.js';
import { PerNode } from './per-node.js';
import { snapshotArchivesSql, type RetainedTable } from './store.js';

/**
 * The console's time series (migrations/0007_series_rollups.sql): what a snapshot
 * or a reconciliation report adds to the rollups, written when it arrives, placed
 * at the agent's time. Reads are in series-queries.ts.
 */

export type SeriesOutcome = 'added' | 'late';

/**
 * Locks the node's cursor row and answers whether a sample at `at` is newer than
 * the newest one taken. Race: two snapshots of one node arrive together; the row
 * lock makes the second wait and read the first one's time and counters.
 */
async function claimCursor(tx: Queryable, nodeId: string, column: 'snapshot_at' | 'report_at', at: Date): Promise<{ newer: boolean; previous: Date | null }> {
  // One statement: the upsert makes the row or locks it, and answers it as committed (after the wait).
  const { rows } = await tx.query({
    name: `series-cursor-${column}`,
    text: `INSERT INTO series_cursors (node_id) VALUES ($1) ON CONFLICT (node_id) DO UPDATE SET node_id = EXCLUDED.node_id RETURNING ${column} AS at`,
    values: [nodeId],
  });
  const previous: Date | null = rows[0].at;
  return { newer: previous === null || previous < at, previous };
}

interface NodeRollupRow {
  width: number;
  bucket: number;
  rx: number;
  tx: number;
  seconds: number;
  cpu: number;
  rss: number;
  samples: number;
  reports: number;
  failures: number;
}

const emptyRow = (width: number, bucket: number): NodeRollupRow => ({
  width,
  bucket,
  rx: 0,
  tx: 0,
  seconds: 0,
  cpu: 0,
  rss: 0,
  samples: 0,
  reports: 0,
  failures: 0,
});
const bucketOf = (at: Date, width: number) => Math.floor(at.getTime() / 1000 / width) * width;

/** The INSERT adding node rollup rows (sums on conflict): node id in $1, the ten columns' arrays from `$first` on (`nodeRollupValues`), rows only when `condition` holds. */
const nodeRollupsInsert = (first: number, condition = 'true') => {
  const p = (i: number) => `$${first + i}`;
  return `INSERT INTO node_series_rollups AS t (width_s, node_id, bucket, rx_bytes, tx_bytes, traffic_seconds, cpu_sum, rss_sum, metric_samples, reports, report_failures)
     SELECT r.width, $1, to_timestamp(r.bucket), r.rx, r.tx, r.seconds, r.cpu, r.rss, r.samples, r.reports, r.failures
     FROM unnest(${p(0)}::int[], ${p(1)}::bigint[], ${p(2)}::float8[], ${p(3)}::float8[], ${p(4)}::float8[], ${p(5)}::float8[], ${p(6)}::float8[], ${p(7)}::int[], ${p(8)}::int[], ${p(9)}::int[])
       AS r(width, bucket, rx, tx, seconds, cpu, rss, samples, reports, failures) WHERE ${condition}
     ON CONFLICT (width_s, node_id, bucket) DO UPDATE SET
       rx_bytes = t.rx_bytes + EXCLUDED.rx_bytes, tx_bytes = t.tx_bytes + EXCLUDED.tx_bytes, traffic_seconds = t.traffic_seconds + EXCLUDED.traffic_seconds,
       cpu_sum = t.cpu_sum + EXCLUDED.cpu_sum, rss_sum = t.rss_sum + EXCLUDED.rss_sum, metric_samples = t.metric_samples + EXCLUDED.metric_samples,
       reports = t.reports + EXCLUDED.reports, report_failures = t.report_failures + EXCLUDED.report_failures`;
};

const nodeRollupValues = (rows: readonly NodeRollupRow[]) =>
  (['width', 'bucket', 'rx', 'tx', 'seconds', 'cpu', 'rss', 'samples', 'reports', 'failures'] as const).map((k) => rows.map((r) => r[k]));

/** The WireGuard interfaces' counters of a snapshot: the interfaces the agent also lists under `wireguard_interfaces`. */
export function wireguardCounters(snapshot: RuntimeSnapshot): CounterReading[] {
  const wireguard = new Set(snapshot.wireguard_interfaces.map((w) => w.name));
  return snapshot.interfaces.filter((i) => wireguard.has(i.name)).map((i) => ({ interface: i.name, rx_bytes: i.rx_bytes, tx_bytes: i.tx_bytes }));
}

/** A node's series cursor (null: no snapshot taken yet) and the counters taken with it. */
export interface SeriesBase {
  at: Date | null;
  counters: CounterReading[];
}

/**
 * The counters of each node's latest snapshot as this process wrote them to the
 * series (issue 30: a snapshot's share in one statement, without the cursor's
 * transaction and the read of the previous counters). An entry is used only
 * while the node's cursor is still at its time, which the write checks: a
 * snapshot another instance took since, or a node forgotten, goes the long way.
 */
export class SeriesBases extends PerNode<SeriesBase> {}

/** Known counters older than this are not used: the retention may have pruned them from `interface_counters_latest` (60 days), far beyond it. */
const BASE_MAX_AGE_MS = 24 * 3600_000;

/**
 * A snapshot's archives (`snapshotArchiveValues`, store.ts) to write with its series
 * share: `written` once a statement that carried them committed.
 */
export interface SnapshotArchives {
  values: unknown[];
  written: boolean;
}

/**
 * A snapshot's share of the series: the traffic since the node's previous
 * snapshot (per interface and summed), its self metrics, and its counters as the
 * next snapshot's base. A snapshot at or before the newest one taken (a retry, or
 * out of order) adds nothing: its interval was counted already. With `bases`
 * holding the node's previous counters, one statement (two when another instance
 * took a snapshot since: the first answers its cursor and counters); otherwise
 * one transaction that reads them under the cursor's lock.
 * `archives`: the snapshot's archives ride on that one statement (issue 30: one
 * round trip for both). When it fails, it wrote neither (one statement), and the
 * share is written again without them, so a failing archive costs the share
 * nothing; whatever way the share went, `archives.written` tells the caller
 * whether it still has to write them (`archiveSnapshot`).
 */
export async function addSnapshotToSeries(
  pool: Pool,
  snapshot: RuntimeSnapshot,
  at: Date,
  bases?: SeriesBases,
  archives?: SnapshotArchives,
): Promise<SeriesOutcome> {
  const nodeId = snapshot.node_id;
  const current = wireguardCounters(snapshot);
  let known = bases?.take(nodeId);
  let outcome: SeriesOutcome | undefined;
  let carry = archives !== undefined && !archives.written;
  // When another instance took the node's previous snapshot, once more on the cursor and counters the first statement saw.
  for (let tries = 0; known && !outcome && tries < 2; tries++) {
    if (!(known.at === null || (known.at < at && at.getTime() - known.at.getTime() <= BASE_MAX_AGE_MS))) break;
    const previous = new Map(known.counters.map((c) => [c.interface, c]));
    let written: true | SeriesBase | undefined;
    try {
      written = await writeSnapshotShare(pool, snapshot, at, known.at, previous, current, carry ? archives!.values : undefined);
    } catch (err) {
      if (!carry) throw err;
      // Either part may have failed: the share once more on its own (the caller writes the archives on their own).
      carry = false;
      tries--;
      continue;
    }
    if (carry) {
      archives!.written = true;
      carry = false;
    }
    if (written === true) outcome = 'added';
    else if (written && written.at !== null && written.at >= at) outcome = 'late';
    else known = written;
  }
  outcome ??= await withTransaction(pool, async (tx) => {
    const cursor = await claimCursor(tx, nodeId, 'snapshot_at', at);
    if (!cursor.newer) return 'late';
    const { rows: before } = cursor.previous
      ? await tx.query(
          `SELECT interface, rx_bytes::float8 AS rx_bytes, tx_bytes::float8 AS tx_bytes FROM interface_counters_latest WHERE node_id = $1 AND at = $2`,
          [nodeId, cursor.previous],
        )
      : { rows: [] };
    const previous = new Map<string, CounterReading>(before.map((r: CounterReading) => [r.interface, r]));
    await writeSnapshotShare(tx, snapshot, at, cursor.previous, previous, current);
    return 'added';
  });
  if (outcome === 'added') bases?.set(nodeId, { at, counters: current });
  return outcome;
}

/**
 * Writes a snapshot's share in one statement, if the node's cursor is still at
 * `previousAt` (the time of the `previous` counters): the cursor moves to `at`,
 * the interface and node rollups, the counters as the next snapshot's base.
 * Answers true when it wrote; otherwise the cursor and counters as the statement
 * saw them (another instance took a snapshot since), or undefined (no cursor, or
 * a concurrent write: the caller takes the long way). Every part waits for the
 * cursor's update (its row lock first, as in the transaction's claim; a
 * concurrent write of the node makes the check fail after it commits).
 * `archives`: the snapshot's archive values (`snapshotArchiveValues`), written by
 * the same statement whatever the cursor says (each archive keeps its bucket's
 * first sample, so writing them again adds nothing).
 */
async function writeSnapshotShare(
  db: Queryable,
  snapshot: RuntimeSnapshot,
  at: Date,
  previousAt: Date | null,
  previous: ReadonlyMap<string, CounterReading>,
  current: CounterReading[],
  archives?: unknown[],
): Promise<true | SeriesBase | undefined> {
  const contributions = trafficContributions(previousAt?.getTime() ?? null, previous, current, at.getTime());
  const perInterface = contributions.filter((c) => c.interface !== null);
  const rows = new Map<string, NodeRollupRow>();
  const rowAt = (width: number, bucket: number) => {
    const key = `${width} ${bucket}`;
    if (!rows.has(key)) rows.set(key, emptyRow(width, bucket));
    return rows.get(key)!;
  };
  for (const c of contributions.filter((c) => c.interface === null))
    Object.assign(rowAt(c.width, c.bucket), { rx: c.rx_bytes, tx: c.tx_bytes, seconds: c.seconds });
  for (const width of ROLLUP_WIDTHS) {
    const row = rowAt(width, bucketOf(at, width));
    row.cpu = snapshot.self_metrics.cpu;
    row.rss = snapshot.self_metrics.rss;
    row.samples = 1;
  }
  const moved = 'EXISTS (SELECT 1 FROM cursor)';
  const { rows: written } = await db.query({
    name: archives ? 'series-snapshot-write-archives' : 'series-snapshot-write',
    // The archives (whatever the cursor says: they keep a bucket's first sample, idempotent) after the share's 22 values.
    text: `WITH ${archives ? `${snapshotArchivesSql(23)},` : ''} cursor AS (UPDATE series_cursors SET snapshot_at = $2 WHERE node_id = $1 AND snapshot_at IS NOT DISTINCT FROM $12 RETURNING 1),
       interfaces AS (
         INSERT INTO interface_traffic_rollups AS t (width_s, node_id, bucket, interface, rx_bytes, tx_bytes, seconds)
         SELECT c.width, $1, to_timestamp(c.bucket), c.interface, c.rx, c.tx, c.seconds
         FROM unnest($6::int[], $7::bigint[], $8::text[], $9::float8[], $10::float8[], $11::float8[]) AS c(width, bucket, interface, rx, tx, seconds) WHERE ${moved}
         ON CONFLICT (width_s, node_id, bucket, interface) DO UPDATE SET
           rx_bytes = t.rx_bytes + EXCLUDED.rx_bytes, tx_bytes = t.tx_bytes + EXCLUDED.tx_bytes, seconds = t.seconds + EXCLUDED.seconds),
       node AS (${nodeRollupsInsert(13, moved)}),
       gone AS (DELETE FROM interface_counters_latest WHERE node_id = $1 AND interface <> ALL($3::text[]) AND ${moved}),
       latest AS (
         INSERT INTO interface_counters_latest (node_id, interface, at, rx_bytes, tx_bytes)
         SELECT $1, c.name, $2, c.rx, c.tx FROM unnest($3::text[], $4::bigint[], $5::bigint[]) AS c(name, rx, tx) WHERE ${moved}
         ON CONFLICT (node_id, interface) DO UPDATE SET at = EXCLUDED.at, rx_bytes = EXCLUDED.rx_bytes, tx_bytes = EXCLUDED.tx_bytes)
       SELECT true AS written, NULL::timestamptz AS at, NULL AS interface, NULL::float8 AS rx_bytes, NULL::float8 AS tx_bytes FROM cursor
       UNION ALL
       SELECT false, c.snapshot_at, l.interface, l.rx_bytes::float8, l.tx_bytes::float8
         FROM series_cursors c LEFT JOIN interface_counters_latest l ON l.node_id = c.node_id AND l.at = c.snapshot_at
         WHERE c.node_id = $1 AND c.snapshot_at IS DISTINCT FROM $12 AND NOT ${moved}`,
    values: [
      snapshot.node_id,
      at,
      current.map((c) => c.interface),
      current.map((c) => c.rx_bytes),
      current.map((c) => c.tx_bytes),
      ...(['width', 'bucket', 'interface', 'rx_bytes', 'tx_bytes', 'seconds'] as const).map((k) => perInterface.map((c) => c[k])),
      previousAt,
      ...nodeRollupValues([...rows.values()]),
      ...(archives ?? []),
    ],
  });
  if (written.length === 0) return undefined;
  if (written[0].written) return true;
  return {
    at: written[0].at,
    counters: written.filter((r) => r.interface !== null).map(({ interface: name, rx_bytes, tx_bytes }) => ({ interface: name, rx_bytes, tx_bytes })),
  };
}

/** A reconciliation report's share: one report (a failure when its status is `failed`) in its bucket of every width. */
export async function addReportToSeries(pool: Pool, nodeId: string, failed: boolean, at: Date): Promise<SeriesOutcome> {
  return withTransaction(pool, async (tx) => {
    if (!(await claimCursor(tx, nodeId, 'report_at', at)).newer) return 'late';
    const rows = ROLLUP_WIDTHS.map((w) => ({ ...emptyRow(w, bucketOf(at, w)), reports: 1, failures: failed ? 1 : 0 }));
    await tx.query({
      name: 'series-report-write',
      text: `WITH node AS (${nodeRollupsInsert(3)}) UPDATE series_cursors SET report_at = $2 WHERE node_id = $1`,
      values: [nodeId, at, ...nodeRollupValues(rows)],
    });
    return 'added';
  });
}

/** Rollup tables and their time column, pruned by the retention job like the samples. */
export const SERIES_RETAINED_TABLES: readonly RetainedTable[] = [
  { table: 'interface_traffic_rollups', column: 'bucket', partitionKey: 'bucket' },
  { table: 'node_series_rollups', column: 'bucket' },
  { table: 'interface_counters_latest', column: 'at' },
];
