import type { RoutingTable } from '../../domain/telemetry/reports.js';
import {
  familyOf,
  prefixSortKey,
  RPKI_STATES,
  summarizeRoutes,
  type Family,
  type RoutingSummary,
  type RpkiCounts,
  type RpkiState,
} from '../../domain/telemetry/routing.js';
import { booleanArray, numberArray, textArray } from '../db/array-literal.js';
import { advisoryKey, type Queryable } from '../db/pool.js';

/**
 * Routing analytics tables (migrations/0010_routing_analytics.sql): the routes of
 * each node's latest table as rows, the summary and churn of every observation,
 * and the fleet's union after each table. Writes run in the transaction that
 * stores the observation (`insertRoutingTable`), under the node's routing lock.
 */

const iso = (t: Date | string) => new Date(t).toISOString();
const num = (v: string | number | null): number | null => (v === null ? null : Number(v));

export interface Churn {
  announced: number;
  withdrawn: number;
}

/** One table of a node at a time: churn compares against the table the node's previous report left. */
export async function lockNodeRouting(db: Queryable, nodeId: string): Promise<void> {
  await db.query('SELECT pg_advisory_xact_lock($1)', [routingLockKey(nodeId)]);
}

const routingLockKey = (nodeId: string): bigint => advisoryKey(`routing-table:${nodeId}`);

/** Prefixes announced and withdrawn against the node's stored table; null when the node never stored one. */
export async function churnAgainstLatest(db: Queryable, table: RoutingTable): Promise<Churn | null> {
  const { rows } = await db.query(
    `WITH fresh AS (SELECT DISTINCT unnest($2::text[]) AS prefix), stored AS (SELECT DISTINCT prefix FROM routing_routes WHERE node_id = $1)
     SELECT EXISTS (SELECT 1 FROM routing_tables WHERE node_id = $1) AS previous,
            (SELECT count(*) FROM (SELECT prefix FROM fresh EXCEPT SELECT prefix FROM stored) a)::int AS announced,
            (SELECT count(*) FROM (SELECT prefix FROM stored EXCEPT SELECT prefix FROM fresh) w)::int AS withdrawn`,
    [table.node_id, textArray(table.routes.map((r) => r.prefix))],
  );
  return rows[0].previous ? { announced: rows[0].announced, withdrawn: rows[0].withdrawn } : null;
}

/**
 * The route rows of a table, written with only what changed (issue 30): rows past the
 * table's end go; each given position (`seqs`, 1-based; every position when the caller
 * does not know the stored rows) is inserted, or updated where it differs from the
 * stored row. A table of 1,500 routes 5 minutes after the previous one differs in a
 * few rows, not 1,500 deleted and inserted. Parameters $1 to $11 of the statement;
 * rows change only when `condition` holds.
 */
const routeRows = (condition = 'true') => `gone AS (DELETE FROM routing_routes WHERE node_id = $1 AND seq > $2 AND ${condition}),
       x AS (SELECT x.seq, x.prefix, x.family, x.sort_key, x.protocol, x.origin_asn, x.as_path::bigint[] AS as_path, x.rpki, x.local
             FROM unnest($3::int[], $4::text[], $5::smallint[], $6::text[], $7::text[], $8::bigint[], $9::text[], $10::text[], $11::boolean[])
               AS x(seq, prefix, family, sort_key, protocol, origin_asn, as_path, rpki, local)),
       put AS (
         INSERT INTO routing_routes AS t (node_id, seq, prefix, family, sort_key, protocol, origin_asn, as_path, rpki, local)
         SELECT $1, x.seq, x.prefix, x.family, x.sort_key, x.protocol, x.origin_asn, x.as_path, x.rpki, x.local
         FROM x LEFT JOIN routing_routes o ON o.node_id = $1 AND o.seq = x.seq
         WHERE (o.seq IS NULL
            OR (o.prefix, o.family, o.sort_key, o.protocol, o.origin_asn, o.as_path, o.rpki, o.local)
               IS DISTINCT FROM (x.prefix, x.family, x.sort_key, x.protocol, x.origin_asn, x.as_path, x.rpki, x.local))
           AND ${condition}
         ON CONFLICT (node_id, seq) DO UPDATE SET prefix = EXCLUDED.prefix, family = EXCLUDED.family, sort_key = EXCLUDED.sort_key, protocol = EXCLUDED.protocol,
           origin_asn = EXCLUDED.origin_asn, as_path = EXCLUDED.as_path, rpki = EXCLUDED.rpki, local = EXCLUDED.local)`;

/** The values of `ROUTE_ROWS`: the rows at `seqs` (1-based), or all of them. */
function routeRowValues(nodeId: string, routes: RoutingTable['routes'], seqs?: readonly number[]): unknown[] {
  const at = seqs ?? routes.map((_, i) => i + 1);
  const r = at.map((seq) => routes[seq - 1]);
  // as_path goes in as one text array ('{1,2,3}') per route: unnest cannot take a ragged bigint[][].
  // The arrays go as literals made here (infra/db/array-literal.ts: the driver's escaping was most of a first table's cost).
  return [
    nodeId,
    routes.length,
    numberArray(at),
    textArray(r.map((x) => x.prefix)),
    numberArray(r.map((x) => familyOf(x.prefix))),
    textArray(r.map((x) => prefixSortKey(x.prefix))),
    textArray(r.map((x) => x.protocol)),
    numberArray(r.map((x) => x.origin_asn)),
    textArray(r.map((x) => `{${x.as_path.join(',')}}`)),
    textArray(r.map((x) => x.rpki)),
    booleanArray(r.map((x) => x.local)),
  ];
}

/** Replaces the node's route rows with the table's, and completes observation `id` with its summary and churn. */
export async function storeRoutingAnalytics(db: Queryable, id: number, receivedAt: Date, table: RoutingTable, churn: Churn | null): Promise<void> {
  await db.query({ name: 'routing-routes-replace', text: `WITH ${routeRows()} SELECT 1`, values: routeRowValues(table.node_id, table.routes) });
  // The summary goes with the node's latest table (only the latest one is read); the
  // observation keeps its churn. received_at too: the partition key, so only the observation's own day is read.
  await db.query(
    `WITH observation AS (UPDATE routing_observations SET announced = $3, withdrawn = $4 WHERE id = $1 AND received_at = $5)
     UPDATE routing_tables SET summary = $2 WHERE node_id = $6 AND observation_id = $1`,
    [id, JSON.stringify(summarizeRoutes(table)), churn?.announced ?? null, churn?.withdrawn ?? null, receivedAt, table.node_id],
  );
}

/**
 * Stores a routing table in one statement (call under the node's routing lock): the
 * observation with its churn, the node's latest table with its summary (JSON text),
 * and its route rows (`routeRows`; `seqs`: only these positions can differ from
 * the stored rows, every position when undefined). Answers the observation id.
 */
export async function storeRoutingTable(
  db: Queryable,
  table: RoutingTable,
  receivedAt: Date,
  churn: Churn | null,
  summaryJson: string,
  seqs?: readonly number[],
): Promise<number> {
  const { rows } = await db.query<{ id: string }>({
    name: 'routing-table-store',
    text: `WITH ${tableWrite('true')} SELECT id FROM obs`,
    values: tableValues(table, receivedAt, churn, summaryJson, seqs),
  });
  return Number(rows[0].id);
}

/**
 * `storeRoutingTable` in one statement outside a transaction, when the node's
 * stored table is still observation `knownId` (the one this process wrote, whose
 * rows `seqs` was found against): the node's routing lock, then its
 * `routing_tables` row locked and checked, then the write. Answers the new
 * observation id, or undefined when the stored table is another one (nothing written).
 */
export async function storeOverKnown(
  db: Queryable,
  table: RoutingTable,
  receivedAt: Date,
  churn: Churn | null,
  summaryJson: string,
  seqs: readonly number[],
  knownId: number,
): Promise<number | undefined> {
  // The lock comes first (the check's row needs it joined), as in the transaction; the row lock re-reads the row as committed after the wait.
  const { rows } = await db.query<{ id: string }>({
    name: 'routing-table-store-over-known',
    text: `WITH lock AS (SELECT pg_advisory_xact_lock($19::bigint)),
       known AS (SELECT 1 FROM routing_tables t, lock WHERE t.node_id = $1 AND t.observation_id = $20 FOR UPDATE OF t),
       ${tableWrite('EXISTS (SELECT 1 FROM known)')}
     SELECT id FROM obs`,
    values: [...tableValues(table, receivedAt, churn, summaryJson, seqs), routingLockKey(table.node_id).toString(), knownId],
  });
  return rows[0] ? Number(rows[0].id) : undefined;
}

/** The observation, the node's latest table and its route rows, when `condition` holds: parameters $1 to $18 (`tableValues`). */
const tableWrite = (condition: string) => `obs AS (
         INSERT INTO routing_observations (node_id, captured_at, received_at, size, size_v4, size_v6, rpki_observed, announced, withdrawn)
         SELECT $1, $12, $13, $2, $2 - $14::int, $14, $15, $16, $17 WHERE ${condition} RETURNING id),
       latest AS (
         INSERT INTO routing_tables (node_id, observation_id, observation_received_at, captured_at, rpki_observed, summary) SELECT $1, id, $13, $12, $15, $18 FROM obs
         ON CONFLICT (node_id) DO UPDATE SET observation_id = EXCLUDED.observation_id, observation_received_at = EXCLUDED.observation_received_at,
           captured_at = EXCLUDED.captured_at, rpki_observed = EXCLUDED.rpki_observed, routes = NULL, summary = EXCLUDED.summary),
       ${routeRows(condition)}`;

function tableValues(table: RoutingTable, receivedAt: Date, churn: Churn | null, summaryJson: string, seqs?: readonly number[]): unknown[] {
  const v6 = table.routes.reduce((n, r) => (r.prefix.includes(':') ? n + 1 : n), 0);
  return [
    ...routeRowValues(table.node_id, table.routes, seqs),
    table.captured_at,
    receivedAt,
    v6,
    table.rpki_observed,
    churn?.announced ?? null,
    churn?.withdrawn ?? null,
    summaryJson,
  ];
}

/**
 * A deleted node's latest table goes: its route rows and its `routing_tables`
 * row (under its routing lock, so a table being stored finishes first). Its
 * observations stay until retention prunes them, like its other samples.
 */
export async function forgetNodeRouting(db: Queryable, nodeId: string): Promise<void> {
  await lockNodeRouting(db, nodeId);
  await db.query(`DELETE FROM routing_routes WHERE node_id = $1`, [nodeId]);
  await db.query(`DELETE FROM routing_tables WHERE node_id = $1`, [nodeId]);
}

/** The latest capture time among the stored tables; null when no node has one. */
export async function latestTableCapture(db: Queryable): Promise<string | null> {
  const { rows } = await db.query(`SELECT max(captured_at) AS at FROM routing_tables`);
  return rows[0].at ? iso(rows[0].at) : null;
}

export interface RoutingObservation {
  id: number;
  node_id: string;
  captured_at: string;
  received_at: string;
  rpki_observed: boolean;
  size: number;
  size_v4: number;
  size_v6: number;
  /** Null for a node's first table (nothing to compare) and for tables stored before churn was kept. */
  announced: number | null;
  withdrawn: number | null;
}

const OBSERVATION_COLUMNS = `o.id, o.node_id, o.captured_at, o.received_at, o.rpki_observed, o.size, o.size_v4, o.size_v6, o.announced, o.withdrawn`;

function observationRow(r: Record<string, any>): RoutingObservation {
  return {
    id: Number(r.id),
    node_id: r.node_id,
    captured_at: iso(r.captured_at),
    received_at: iso(r.received_at),
    rpki_observed: r.rpki_observed,
    size: r.size,
    size_v4: r.size_v4,
    size_v6: r.size_v6,
    announced: r.announced,
    withdrawn: r.withdrawn,
  };
}

export interface LatestRouting extends RoutingObservation {
  summary: RoutingSummary;
}

/**
 * A node's latest observation (routing_tables `t`), as a lateral subquery: a
 * nested loop whose probe run-time pruning sends to the one day's partition. A
 * plain join on (id, received_at) was planned as a hash join over every
 * partition (90 ms against 4 ms for 1,000 nodes and 30 days).
 */
export const LATEST_OBSERVATION = `SELECT * FROM routing_observations WHERE id = t.observation_id AND received_at = t.observation_received_at LIMIT 1`;

/** Each node's latest observation with its summary, by node id (nodes that never sent a table are absent). */
export async function latestRouting(db: Queryable, nodeIds?: readonly string[]): Promise<Map<string, LatestRouting>> {
  const { rows } = await db.query(
    `SELECT ${OBSERVATION_COLUMNS}, coalesce(t.summary, o.summary) AS summary, CASE WHEN t.summary IS NULL AND o.summary IS NULL THEN t.routes END AS routes
     FROM routing_tables t CROSS JOIN LATERAL (${LATEST_OBSERVATION}) o
     WHERE $1::text[] IS NULL OR t.node_id = ANY($1) ORDER BY t.node_id`,
    [nodeIds ?? null],
  );
  // A table stored before summaries were kept is summarised from its routes once read.
  return new Map(
    rows.map((r: Record<string, any>) => [
      r.node_id as string,
      { ...observationRow(r), summary: r.summary ?? summarizeRoutes({ routes: r.routes, rpki_observed: r.rpki_observed }) },
    ]),
  );
}

/** The node's latest `limit` observations, oldest first. */
export async function routingTimeline(db: Queryable, nodeId: string, limit: number): Promise<RoutingObservation[]> {
  const { rows } = await db.query(
    `SELECT * FROM (SELECT ${OBSERVATION_COLUMNS} FROM routing_observations o WHERE o.node_id = $1 ORDER BY o.captured_at DESC, o.id DESC LIMIT $2) l
     ORDER BY captured_at, id`,
    [nodeId, limit],
  );
  return rows.map(observationRow);
}

export type OriginsSort = 'count' | 'v4' | 'v6';

export interface OriginCount {
  asn: number;
  /** Distinct prefixes the AS originates. */
  count: number;
  count_v4: number;
  count_v6: number;
}

/** ORDER BY of origin rows: the chosen count, then the total, then the ASN. */
export const ORIGIN_ORDER: Record<OriginsSort, string> = {
  count: 'count DESC, asn',
  v4: 'count_v4 DESC, count DESC, asn',
  v6: 'count_v6 DESC, count DESC, asn',
};

/** Top origin ASNs of the node's latest table. */
export async function topOrigins(db: Queryable, nodeId: string, limit: number, sort: OriginsSort = 'count'): Promise<OriginCount[]> {
  const { rows } = await db.query(
    `SELECT origin_asn AS asn, count(DISTINCT prefix)::int AS count,
            count(DISTINCT prefix) FILTER (WHERE family = 4)::int AS count_v4, count(DISTINCT prefix) FILTER (WHERE family = 6)::int AS count_v6
     FROM routing_routes WHERE node_id = $1 AND origin_asn IS NOT NULL
     GROUP BY origin_asn ORDER BY ${ORIGIN_ORDER[sort]} LIMIT $2`,
    [nodeId, limit],
  );
  return rows.map((r: Record<string, any>) => ({ ...r, asn: Number(r.asn) }) as OriginCount);
}

export interface RouteFilter {
  family?: Family;
  /** true: routes originated by this network; false: learnt from peers. */
  local?: boolean;
  /** Case-insensitive substring of the prefix or the protocol, or of the origin ASN's digits (`AS` prefix optional). */
  q?: string;
  rpki?: RpkiState;
  /** Routes whose AS path (origin included) holds this AS as a whole hop. */
  path_asn?: number;
}

export interface RouteRow {
  prefix: string;
  family: Family;
  protocol: string;
  origin_asn: number | null;
  as_path: number[];
  rpki: RpkiState | null;
  local: boolean;
}

export interface RouteSearch {
  total: number;
  routes: RouteRow[];
  /** The three states under every condition but `rpki` (routes without a state are not counted). */
  rpki_counts: RpkiCounts;
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The WHERE clause of a search of `node_id = $1` (parameters $2 to $7) and its parameters. */
function routeConditions(nodeId: string, f: RouteFilter): { where: string; params: unknown[] } {
  const asnDigits = f.q === undefined ? null : (/^(?:AS)?(\d+)$/i.exec(f.q.trim())?.[1] ?? null);
  return {
    where: `node_id = $1 AND ($2::smallint IS NULL OR family = $2) AND ($3::boolean IS NULL OR local = $3)
      AND ($4::text IS NULL OR prefix ILIKE $4 OR protocol ILIKE $4 OR origin_asn::text LIKE $5)
      AND ($6::bigint IS NULL OR origin_asn = $6 OR $6 = ANY (as_path))`,
    params: [
      nodeId,
      f.family ?? null,
      f.local ?? null,
      f.q === undefined ? null : `%${likeEscape(f.q)}%`,
      asnDigits === null ? null : `%${asnDigits}%`,
      f.path_asn ?? null,
    ],
  };
}

/** One page of the node's latest routes in address order, the total under every condition, and the RPKI distribution without the `rpki` condition. */
export async function searchRoutes(db: Queryable, nodeId: string, filter: RouteFilter, limit: number, offset: number): Promise<RouteSearch> {
  const { where, params } = routeConditions(nodeId, filter);
  const [counts, page] = await Promise.all([
    db.query(`SELECT rpki, count(*)::int AS n FROM routing_routes WHERE ${where} GROUP BY rpki`, params),
    db.query(
      `SELECT prefix, family, protocol, origin_asn, as_path, rpki, local FROM routing_routes WHERE ${where} AND ($7::text IS NULL OR rpki = $7)
       ORDER BY family, sort_key NULLS LAST, prefix, seq LIMIT $8 OFFSET $9`,
      [...params, filter.rpki ?? null, limit, offset],
    ),
  ]);
  const byState = new Map<string | null, number>(counts.rows.map((r: { rpki: string | null; n: number }) => [r.rpki, r.n]));
  const rpki_counts = Object.fromEntries(RPKI_STATES.map((s) => [s, byState.get(s) ?? 0])) as RpkiCounts;
  const total = filter.rpki ? rpki_counts[filter.rpki] : [...byState.values()].reduce((a, b) => a + b, 0);
  return {
    total,
    rpki_counts,
    routes: page.rows.map((r: Record<string, any>) => ({ ...r, origin_asn: num(r.origin_asn), as_path: r.as_path.map(Number) }) as RouteRow),
  };
}

export interface SizeBucket {
  size: number;
  size_v4: number;
  size_v6: number;
  /** Sums over the bucket's observations; null when none of them has churn. */
  announced: number | null;
  withdrawn: number | null;
}

/**
 * Table sizes per bucket of `bucketSeconds` in [from, to) (epoch seconds), by
 * bucket start: the last observation of each bucket, for one node or, with
 * `nodeId` null, the fleet. A node's observation is placed at the agent's
 * `captured_at`, at the arrival when that is ahead of the server (the fleet's
 * rows were placed so when written, one per 5 minutes: the bucket's latest).
 */
export async function sizeBuckets(db: Queryable, nodeId: string | null, from: number, to: number, bucketSeconds: number): Promise<Map<number, SizeBucket>> {
  const source =
    nodeId === null
      ? `SELECT placed_at AS at, seq AS id, size, size_v4, size_v6, NULL::int AS announced, NULL::int AS withdrawn FROM routing_fleet_observations
         WHERE at >= to_timestamp($1) - interval '5 minutes' AND at < to_timestamp($2)`
      : `SELECT LEAST(captured_at, received_at) AS at, id, size, size_v4, size_v6, announced, withdrawn FROM routing_observations
         WHERE node_id = $4 AND captured_at >= to_timestamp($1)`;
  const { rows } = await db.query(
    `SELECT (floor(extract(epoch FROM at) / $3) * $3)::bigint AS t,
            (array_agg(size ORDER BY at DESC, id DESC))[1] AS size, (array_agg(size_v4 ORDER BY at DESC, id DESC))[1] AS size_v4,
            (array_agg(size_v6 ORDER BY at DESC, id DESC))[1] AS size_v6, sum(announced)::int AS announced, sum(withdrawn)::int AS withdrawn
     FROM (${source}) s WHERE at >= to_timestamp($1) AND at < to_timestamp($2) GROUP BY 1`,
    nodeId === null ? [from, to, bucketSeconds] : [from, to, bucketSeconds, nodeId],
  );
  return new Map(rows.map(({ t, ...r }: Record<string, any>) => [Number(t), r as SizeBucket]));
}
