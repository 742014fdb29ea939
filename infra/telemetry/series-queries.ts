import { gridEnd, rollupWidthFor, tileWindow, type Grid } from '../../domain/series/grid.js';
import type { Queryable } from '../db/pool.js';

/**
 * Reads of the console's time series from the rollups (migrations/0007). Each
 * query reads the widest rollup dividing the grid's width, through the index
 * `(width_s, bucket)` or the key `(width_s, node_id, bucket)`, and answers per
 * grid bucket (epoch seconds of its start). A rate is bytes over measured
 * seconds; a bucket nobody measured has no row.
 */

export interface Rate {
  rx: number;
  tx: number;
}

/** The window's SQL arguments: rollup width, grid width, start and end in epoch seconds. */
const window = (grid: Grid) => [rollupWidthFor(grid.bucket_seconds), grid.bucket_seconds, grid.start, gridEnd(grid)];
const GRID_BUCKET = `(floor(extract(epoch FROM bucket) / $2) * $2)::bigint`;
const IN_WINDOW = `width_s = $1 AND bucket >= to_timestamp($3) AND bucket < to_timestamp($4)`;
/** `IN_WINDOW` for the folded periods (compaction.ts) that can hold the window's buckets. */
const PERIOD_IN_WINDOW = `width_s = $1 AND period > to_timestamp($3) - make_interval(secs => greatest(3600, $1::int)) AND period < to_timestamp($4)`;

/**
 * The per-interface rollup rows `rawWhere` selects (over width_s, node_id,
 * bucket, interface), from interface_traffic_rollups and from its folded
 * periods (compaction.ts); `periodWhere` narrows the folded rows to the periods
 * that can hold them (over width_s, node_id, period).
 */
function interfaceRollups(rawWhere: string, periodWhere: string): string {
  return `(SELECT width_s, node_id, bucket, interface, rx_bytes, tx_bytes, seconds FROM interface_traffic_rollups WHERE ${rawWhere}
    UNION ALL
    SELECT * FROM (SELECT p.width_s, p.node_id, p.period + u.b * interval '1 second' AS bucket, u.interface, u.rx_bytes, u.tx_bytes, u.seconds
      FROM interface_traffic_rollup_periods p, unnest(p.interface, p.bucket_s, p.rx_bytes, p.tx_bytes, p.seconds) AS u(interface, b, rx_bytes, tx_bytes, seconds)
      WHERE ${periodWhere}) f WHERE ${rawWhere})`;
}

/**
 * A sum over the whole window reads the fewest rollup rows that tile it
 * (`tileWindow`): one range of the (width_s, bucket) index per tile, parameters
 * from `$first` on.
 */
function wholeWindow(grid: Grid, first: number): { sql: string; periods: string; args: number[] } {
  return tiles(tileWindow(grid.start, gridEnd(grid)), first);
}

/** The conditions of `tiles` on rollup buckets (`sql`) and on folded periods (`periods`), parameters from `$first` on. */
function tiles(list: ReturnType<typeof tileWindow>, first: number): { sql: string; periods: string; args: number[] } {
  const p = (i: number, k: number) => `$${first + 3 * i + k}`;
  const sql = list.map((_, i) => `(width_s = ${p(i, 0)} AND bucket >= to_timestamp(${p(i, 1)}) AND bucket < to_timestamp(${p(i, 2)}))`).join(' OR ');
  const periods = list
    .map(
      (_, i) =>
        `(width_s = ${p(i, 0)} AND period > to_timestamp(${p(i, 1)}) - make_interval(secs => greatest(3600, ${p(i, 0)}::int)) AND period < to_timestamp(${p(i, 2)}))`,
    )
    .join(' OR ');
  return { sql: `(${sql})`, periods: `(${periods})`, args: list.flatMap((t) => [t.width, t.from, t.to]) };
}

/**
 * Throughput per grid bucket summed over nodes (all nodes, or `nodeIds`): each
 * node's rate is its bytes over its measured seconds in the bucket, and the
 * fleet's is the sum of the node rates measured there.
 */
export async function trafficRates(db: Queryable, grid: Grid, nodeIds: readonly string[] | null): Promise<Map<number, Rate>> {
  // Two statements rather than `$5 IS NULL OR ...`: a generic plan of that could not use the key for one node.
  const some = nodeIds === null ? '' : 'AND node_id = ANY($5)';
  const { rows } = await db.query(
    `SELECT b, sum(rx / secs) AS rx, sum(tx / secs) AS tx FROM (
       SELECT node_id, ${GRID_BUCKET} AS b, sum(rx_bytes) AS rx, sum(tx_bytes) AS tx, sum(traffic_seconds) AS secs
       FROM node_series_rollups WHERE ${IN_WINDOW} AND traffic_seconds > 0 ${some}
       GROUP BY node_id, b) n
     GROUP BY b`,
    nodeIds === null ? window(grid) : [...window(grid), nodeIds],
  );
  return new Map(rows.map((r: { b: string; rx: number; tx: number }) => [Number(r.b), { rx: r.rx, tx: r.tx }]));
}

/** Bytes counted in the grid's window over every node (measured bytes, not rates). */
export async function trafficBytes(db: Queryable, grid: Grid): Promise<Rate> {
  const w = wholeWindow(grid, 1);
  const { rows } = await db.query(`SELECT coalesce(sum(rx_bytes), 0) AS rx, coalesce(sum(tx_bytes), 0) AS tx FROM node_series_rollups WHERE ${w.sql}`, w.args);
  return { rx: rows[0].rx, tx: rows[0].tx };
}

export interface MetricsCell {
  node_id: string;
  b: number;
  cpu: number | null;
  rss: number | null;
  rx: number | null;
  tx: number | null;
  reports: number;
  failures: number;
}

/** Per node and grid bucket: average CPU and RSS of its snapshots, its throughput, its reports and failed reports. */
export async function metricsCells(db: Queryable, grid: Grid): Promise<MetricsCell[]> {
  const { rows } = await db.query(
    `SELECT node_id, ${GRID_BUCKET} AS b,
       sum(cpu_sum) / nullif(sum(metric_samples), 0) AS cpu, sum(rss_sum) / nullif(sum(metric_samples), 0) AS rss,
       sum(rx_bytes) / nullif(sum(traffic_seconds), 0) AS rx, sum(tx_bytes) / nullif(sum(traffic_seconds), 0) AS tx,
       sum(reports)::int AS reports, sum(report_failures)::int AS failures
     FROM node_series_rollups WHERE ${IN_WINDOW} GROUP BY node_id, b`,
    window(grid),
  );
  return rows.map((r: MetricsCell & { b: string }) => ({ ...r, b: Number(r.b) }));
}

export interface InterfaceRef {
  node_id: string;
  interface: string;
}

export interface InterfaceTotal extends InterfaceRef {
  rx_bytes: number;
  tx_bytes: number;
}

/**
 * Bytes each WireGuard interface of these nodes counted in the grid's window. No
 * join: the caller keeps the interfaces it ranks (a join against a list of
 * hundreds planned as sorts on disk and cost a second at 500 interfaces).
 */
export async function interfaceTotals(db: Queryable, grid: Grid, nodeIds: readonly string[]): Promise<InterfaceTotal[]> {
  if (nodeIds.length === 0) return [];
  const w = wholeWindow(grid, 2);
  const { rows } = await db.query(
    `SELECT node_id, interface, sum(rx_bytes) AS rx_bytes, sum(tx_bytes) AS tx_bytes
     FROM ${interfaceRollups(`node_id = ANY($1) AND ${w.sql}`, `node_id = ANY($1) AND ${w.periods}`)} r
     GROUP BY node_id, interface`,
    [nodeIds, ...w.args],
  );
  return rows;
}

export interface InterfaceCell extends InterfaceRef, Rate {
  b: number;
}

/** Rates per grid bucket of a few interfaces (the top ranked ones): bytes over measured seconds. */
export async function interfaceRates(db: Queryable, grid: Grid, interfaces: readonly InterfaceRef[]): Promise<InterfaceCell[]> {
  if (interfaces.length === 0) return [];
  const { rows } = await db.query(
    `SELECT node_id, interface, ${GRID_BUCKET} AS b, sum(rx_bytes) / sum(seconds) AS rx, sum(tx_bytes) / sum(seconds) AS tx
     FROM ${interfaceRollups(`${IN_WINDOW} AND node_id = ANY($5)`, `${PERIOD_IN_WINDOW} AND node_id = ANY($5)`)} r
     WHERE seconds > 0 AND (node_id, interface) IN (SELECT * FROM unnest($6::text[], $7::text[]))
     GROUP BY node_id, interface, b`,
    [...window(grid), [...new Set(interfaces.map((i) => i.node_id))], interfaces.map((i) => i.node_id), interfaces.map((i) => i.interface)],
  );
  return rows.map((r: InterfaceCell & { b: string }) => ({ ...r, b: Number(r.b) }));
}

export interface ArchiveRow {
  at: string;
  interface: string;
  rx_bytes: number;
  tx_bytes: number;
}

/**
 * A node's 5-minute interface traffic archive rows in [from, to), ascending
 * (cumulative counters as reported), raw and folded (compaction.ts); a bucket
 * in both (a sample that came after its hour was folded) keeps the folded one,
 * the first, as the ingest keeps a bucket's first sample.
 */
export async function interfaceArchive(db: Queryable, nodeId: string, from: Date, to: Date): Promise<ArchiveRow[]> {
  const { rows } = await db.query(
    `SELECT at, interface, rx_bytes::float8 AS rx_bytes, tx_bytes::float8 AS tx_bytes FROM (
       SELECT DISTINCT ON (interface, bucket) * FROM (
         SELECT at, interface, bucket, rx_bytes, tx_bytes, 1 AS raw FROM interface_traffic_samples WHERE node_id = $1 AND at >= $2 AND at < $3
         UNION ALL
         SELECT * FROM (SELECT h.hour + u.us * interval '1 microsecond' AS at, u.interface, date_bin('5 minutes', h.hour + u.us * interval '1 microsecond', to_timestamp(0)) AS bucket,
             u.rx_bytes, u.tx_bytes, 0 AS raw
           FROM interface_traffic_hours h, unnest(h.interface, telemetry_undelta(h.at_us), telemetry_undelta(h.rx_bytes), telemetry_undelta(h.tx_bytes)) AS u(interface, us, rx_bytes, tx_bytes)
           WHERE h.node_id = $1 AND h.hour > $2::timestamptz - interval '1 hour' AND h.hour < $3) f
         WHERE at >= $2 AND at < $3
       ) s ORDER BY interface, bucket, raw
     ) a ORDER BY at, interface`,
    [nodeId, from, to],
  );
  return rows.map((r: { at: Date } & Omit<ArchiveRow, 'at'>) => ({ ...r, at: r.at.toISOString() }));
}

/**
 * Bytes one WireGuard interface counted in [start, end) (epoch seconds, multiples
 * of 300), from the fewest rollup rows that tile the window. 0 when nothing was
 * counted: a usage total, not a series.
 */
export async function interfaceBytesBetween(db: Queryable, ref: InterfaceRef, start: number, end: number): Promise<Rate> {
  const list = tileWindow(start, end);
  if (list.length === 0) return { rx: 0, tx: 0 };
  const w = tiles(list, 3);
  const { rows } = await db.query(
    `SELECT coalesce(sum(rx_bytes), 0)::float8 AS rx, coalesce(sum(tx_bytes), 0)::float8 AS tx
     FROM ${interfaceRollups(`node_id = $1 AND interface = $2 AND ${w.sql}`, `node_id = $1 AND ${w.periods}`)} r`,
    [ref.node_id, ref.interface, ...w.args],
  );
  return { rx: rows[0].rx, tx: rows[0].tx };
}
