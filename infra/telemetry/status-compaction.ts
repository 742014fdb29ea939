import { applyChanges, changesBetween, type JsonChange } from '../../domain/telemetry/changes.js';
import { withTransaction, type Pool, type Queryable } from '../db/pool.js';
import { statusBodies, type StoredStatusBody } from './status-bodies.js';

/**
 * Status snapshots folded by hour (migrations/0033, `status_snapshot_hours`):
 * one row per node, kind and closed hour, the lean fields in arrays and each
 * body as its change against the body before it.
 *
 * What a folded snapshot's body keeps (docs/decisions.md, "Counters of old
 * snapshots at 5-minute resolution"): everything, except that the counters and
 * times an agent re-sends every minute (`VOLATILE_KEYS`) of a snapshot that is
 * not the first of its 5-minute bucket read as those of the snapshot before it
 * in the row: the resolution of the traffic archive.
 */

/** Keys whose values are per-minute counters and times (interfaces, WireGuard peers). */
export const VOLATILE_KEYS: ReadonlySet<string> = new Set(['rx_bytes', 'tx_bytes', 'latest_handshake_at']);
/** Counters of folded snapshots are kept once per this many seconds (the archive's 5 minutes). */
export const COUNTER_RESOLUTION_S = 300;
/** Nodes folded per transaction (an hour of a node's snapshots is about 60 bodies of a few KB each). */
const NODES_PER_BATCH = 25;
/** Hours folded per pass of the loop (with `NODES_PER_BATCH`, at most about 9,000 bodies in memory). */
const HOURS_PER_BATCH = 6;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `next` with every volatile value whose path `previous` also has replaced by `previous`'s. */
export function carryVolatile(previous: unknown, next: unknown): unknown {
  if (Array.isArray(previous) && Array.isArray(next)) {
    return previous.length === next.length ? next.map((v, i) => carryVolatile(previous[i], v)) : next;
  }
  if (!isObject(previous) || !isObject(next)) return next;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(next)) out[key] = VOLATILE_KEYS.has(key) && key in previous ? previous[key] : carryVolatile(previous[key], value);
  return out;
}

interface Entry {
  id: number;
  createdAt: Date;
  generation: number | null;
  status: string | null;
  drift_count: number | null;
  body: unknown;
}

/** A folded row as read: its identity, arrays and changes. */
export interface HourRow {
  node_id: string;
  kind: string;
  hour: Date;
  ids: string[];
  created_us: string[];
  generation: (number | null)[];
  status: (string | null)[];
  drift_count: (number | null)[];
  based: boolean;
  changes: JsonChange[];
}

const utcDay = (at: Date) => at.toISOString().slice(0, 10);
const hourOf = (at: Date) => new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000);
const bucketOf = (at: Date) => Math.floor(at.getTime() / 1000 / COUNTER_RESOLUTION_S);

/** The bases (status_bases) of these (node, kind, day)s, by `node\nkind\nday`. */
async function basesOf(db: Queryable, wanted: readonly { node_id: string; kind: string; day: string }[]): Promise<Map<string, unknown>> {
  const bases = new Map<string, unknown>();
  if (wanted.length === 0) return bases;
  const { rows } = await db.query<{ node_id: string; kind: string; day: string; body: unknown }>(
    `SELECT b.node_id, b.kind, b.day::text AS day, b.body FROM unnest($1::text[], $2::text[], $3::date[]) AS w(node_id, kind, day)
     JOIN status_bases b ON b.node_id = w.node_id AND b.kind = w.kind AND b.day = w.day`,
    [wanted.map((w) => w.node_id), wanted.map((w) => w.kind), wanted.map((w) => w.day)],
  );
  for (const b of rows) bases.set(`${b.node_id}\n${b.kind}\n${b.day}`, b.body);
  return bases;
}

/** The entries of folded rows, each row's in id order, with their bodies. */
export async function decodeHourRows(db: Queryable, rows: readonly HourRow[]): Promise<(Entry & { node_id: string; kind: string })[][]> {
  const bases = await basesOf(
    db,
    rows.filter((r) => r.based).map((r) => ({ node_id: r.node_id, kind: r.kind, day: utcDay(r.hour) })),
  );
  return rows.map((r) => {
    let body: unknown = r.based ? bases.get(`${r.node_id}\n${r.kind}\n${utcDay(r.hour)}`) : null;
    if (body === undefined) throw new Error(`status snapshots of ${r.node_id}/${r.kind} at ${r.hour.toISOString()}: their base is missing`);
    let us = 0;
    return r.ids.map((id, i) => {
      us += Number(r.created_us[i]);
      body = applyChanges(body, r.changes[i]);
      return {
        node_id: r.node_id,
        kind: r.kind,
        id: Number(id),
        createdAt: new Date(r.hour.getTime() + Math.round(us / 1000)),
        generation: r.generation[i],
        status: r.status[i],
        drift_count: r.drift_count[i],
        body,
      };
    });
  });
}

/** The folded row of one (node, kind, hour) from its entries in id order. */
function encode(nodeId: string, kind: string, hour: Date, entries: readonly Entry[], base: unknown): Record<string, unknown> {
  const changes: JsonChange[] = [];
  const us: number[] = [];
  let previous: Entry | null = null;
  let stored: unknown = base ?? null;
  let previousUs = 0;
  for (const e of entries) {
    const sameBucket = previous !== null && bucketOf(previous.createdAt) === bucketOf(e.createdAt);
    const body = sameBucket ? carryVolatile(stored, e.body) : e.body;
    changes.push(changesBetween(stored, body));
    stored = body;
    const at = (e.createdAt.getTime() - hour.getTime()) * 1000;
    us.push(at - previousUs);
    previousUs = at;
    previous = e;
  }
  return {
    node_id: nodeId,
    kind,
    hour: hour.toISOString(),
    first_id: entries[0].id,
    last_id: entries[entries.length - 1].id,
    ids: entries.map((e) => e.id),
    based: base !== undefined,
    created_us: us,
    generation: entries.map((e) => e.generation),
    status: entries.map((e) => e.status),
    drift_count: entries.map((e) => e.drift_count),
    changes,
  };
}

export const HOUR_ROW_COLUMNS = `node_id, kind, hour, ids, created_us, generation, status, drift_count, based, changes`;

/** Folds the raw snapshots of `nodeIds` before `horizon`; answers the folded rows written. */
async function foldNodes(tx: Queryable, nodeIds: readonly string[], horizon: Date): Promise<number> {
  const { rows } = await tx.query(
    `SELECT id, node_id, kind, generation, status, drift_count, created_at, change, body FROM status_snapshots
     WHERE node_id = ANY($1) AND created_at < $2 ORDER BY node_id, kind, id`,
    [nodeIds, horizon],
  );
  if (rows.length === 0) return 0;
  const bodies = await statusBodies(tx, rows as StoredStatusBody[]);
  const groups = new Map<string, { node_id: string; kind: string; hour: Date; entries: Entry[] }>();
  rows.forEach((r: Record<string, any>, i) => {
    const hour = hourOf(r.created_at);
    const key = `${r.node_id}\n${r.kind}\n${hour.toISOString()}`;
    if (!groups.has(key)) groups.set(key, { node_id: r.node_id, kind: r.kind, hour, entries: [] });
    groups
      .get(key)!
      .entries.push({ id: Number(r.id), createdAt: r.created_at, generation: r.generation, status: r.status, drift_count: r.drift_count, body: bodies[i] });
  });
  // An hour folded already (a row that came after its pass): its entries join the raw ones.
  const list = [...groups.values()];
  const { rows: old } = await tx.query<HourRow>(
    `DELETE FROM status_snapshot_hours h USING unnest($1::text[], $2::text[], $3::timestamptz[]) AS g(node_id, kind, hour)
     WHERE h.node_id = g.node_id AND h.kind = g.kind AND h.hour = g.hour RETURNING ${HOUR_ROW_COLUMNS.replace(/(\w+)/g, 'h.$1')}`,
    [list.map((g) => g.node_id), list.map((g) => g.kind), list.map((g) => g.hour)],
  );
  for (const entries of await decodeHourRows(tx, old)) {
    const g = groups.get(`${entries[0].node_id}\n${entries[0].kind}\n${hourOf(entries[0].createdAt).toISOString()}`)!;
    g.entries.push(...entries);
    g.entries.sort((a, b) => a.id - b.id);
  }
  const bases = await basesOf(
    tx,
    list.map((g) => ({ node_id: g.node_id, kind: g.kind, day: utcDay(g.hour) })),
  );
  const folded = list.map((g) => encode(g.node_id, g.kind, g.hour, g.entries, bases.get(`${g.node_id}\n${g.kind}\n${utcDay(g.hour)}`)));
  await tx.query(
    `INSERT INTO status_snapshot_hours (node_id, kind, hour, first_id, last_id, ids, based, created_us, generation, status, drift_count, changes)
     SELECT node_id, kind, hour, first_id, last_id, ids, based, created_us, generation, status, drift_count, changes
     FROM json_populate_recordset(NULL::status_snapshot_hours, $1)`,
    [JSON.stringify(folded)],
  );
  // The rows read above, by id: one inserted meanwhile stays for the next pass.
  await tx.query(`DELETE FROM status_snapshots WHERE node_id = ANY($1) AND created_at < $2 AND id = ANY($3)`, [nodeIds, horizon, rows.map((r) => r.id)]);
  return folded.length;
}

/**
 * Folds every status snapshot created before `horizon` (an hour boundary), at
 * most `HOURS_PER_BATCH` hours and `NODES_PER_BATCH` nodes per transaction
 * (an upgraded deployment's backlog goes in steps); answers the folded rows written.
 */
export async function compactStatusSnapshots(pool: Pool, horizon: Date): Promise<number> {
  let written = 0;
  for (;;) {
    const { rows: first } = await pool.query(`SELECT min(created_at) AS at FROM status_snapshots WHERE created_at < $1`, [horizon]);
    if (first[0].at === null) return written;
    const upTo = new Date(Math.min(horizon.getTime(), hourOf(first[0].at).getTime() + HOURS_PER_BATCH * 3_600_000));
    const { rows } = await pool.query<{ node_id: string }>(`SELECT DISTINCT node_id FROM status_snapshots WHERE created_at < $1 ORDER BY node_id`, [upTo]);
    for (let i = 0; i < rows.length; i += NODES_PER_BATCH) {
      const nodeIds = rows.slice(i, i + NODES_PER_BATCH).map((r) => r.node_id);
      written += await withTransaction(pool, (tx) => foldNodes(tx, nodeIds, upTo));
    }
  }
}

/**
 * The lean rows (id, kind, generation, status, created_at, drift_count) of the
 * folded rows `candidates` selects (a subquery over status_snapshot_hours).
 */
export function foldedLean(candidates: string): string {
  return `SELECT u.id, h.kind, u.generation, u.status, h.hour + u.us * interval '1 microsecond' AS created_at, u.drift_count
    FROM (${candidates}) h, unnest(h.ids, telemetry_undelta(h.created_us), h.generation, h.status, h.drift_count) AS u(id, us, generation, status, drift_count)`;
}

/**
 * The folded rows of a node (optionally of one kind) that can hold its newest
 * `limit` snapshots with an id below `before` (null: no bound): the `limit` rows
 * whose newest id is below it, and those that straddle it. $1 node, $2 kind or
 * null, $3 before or null, $4 limit.
 */
export const FOLDED_CANDIDATES = `(SELECT * FROM status_snapshot_hours WHERE node_id = $1 AND ($2::text IS NULL OR kind = $2) AND ($3::bigint IS NULL OR last_id < $3)
    ORDER BY last_id DESC LIMIT $4)
  UNION ALL
  (SELECT * FROM status_snapshot_hours WHERE node_id = $1 AND ($2::text IS NULL OR kind = $2) AND $3::bigint IS NOT NULL AND first_id < $3 AND last_id >= $3)`;

/** A node's snapshots with their bodies from the folded rows that can hold its newest `limit` below `before`; newest first. */
export async function foldedWithBodies(
  db: Queryable,
  nodeId: string,
  kind: string | null,
  before: number | null,
  limit: number,
): Promise<(Entry & { node_id: string; kind: string })[]> {
  const { rows } = await db.query<HourRow>(`SELECT ${HOUR_ROW_COLUMNS} FROM (${FOLDED_CANDIDATES}) h`, [nodeId, kind, before, limit]);
  return (await decodeHourRows(db, rows))
    .flat()
    .filter((e) => before === null || e.id < before)
    .sort((a, b) => b.id - a.id)
    .slice(0, limit);
}

/** The folded snapshot with this id and its body; undefined when no folded row holds it. */
export async function foldedById(db: Queryable, id: number): Promise<(Entry & { node_id: string; kind: string }) | undefined> {
  const { rows } = await db.query<HourRow>(
    `SELECT ${HOUR_ROW_COLUMNS} FROM status_snapshot_hours WHERE int8range(first_id, last_id, '[]') @> $1::bigint AND $1::bigint = ANY(ids)`,
    [id],
  );
  return (await decodeHourRows(db, rows)).flat().find((e) => e.id === id);
}

/** A folded snapshot as the status-event reads answer it (store.ts' `StatusEventRow` with its node; `K` its kind type). */
export function asStatusEvent<K extends string>(e: Entry & { node_id: string; kind: string }) {
  return {
    id: e.id,
    node_id: e.node_id,
    kind: e.kind as K,
    generation: e.generation,
    status: e.status,
    drift_count: e.drift_count,
    created_at: e.createdAt.toISOString(),
    payload: e.body,
  };
}
