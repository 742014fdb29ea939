import { applyChanges, changesBetween, type JsonChange } from '../../domain/telemetry/changes.js';
import type { Queryable } from '../db/pool.js';

/**
 * The bodies of status snapshots (migrations/0031): each row stores what its
 * body changed against the base of its node, kind and UTC day (`status_bases`,
 * the day's first body), and reads back as that base with the change applied.
 */

const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/**
 * The bases this process has seen, by node, kind and UTC day: a base never
 * changes once made, so a report of the same day reads it from here instead of
 * the database (the write then checks that the row is still there, see
 * `writeSnapshot`). One per database (its pool's deps); bounded.
 */
export class StatusBaseCache {
  private readonly bases = new Map<string, unknown>();
  constructor(private readonly max = 50_000) {}

  static key(nodeId: string, kind: string, at: Date): string {
    return `${nodeId}\n${kind}\n${utcDay(at)}`;
  }

  get(key: string): unknown {
    return this.bases.get(key);
  }

  set(key: string, base: unknown): void {
    // Past the bound (a day's change over a large fleet), start over: the next report of each node reads its base once.
    if (this.bases.size >= this.max) this.bases.clear();
    this.bases.set(key, base);
  }

  delete(key: string): void {
    this.bases.delete(key);
  }
}

/**
 * What `body` changes against the base of its node, kind and the UTC day of
 * `at`; the first body of a day becomes the base (and changes nothing).
 */
export async function changeAgainstBase(db: Queryable, nodeId: string, kind: string, at: Date, body: unknown): Promise<JsonChange> {
  return (await changeAndBase(db, nodeId, kind, at, body)).change;
}

/**
 * `changeAgainstBase` with the base it was taken against. Cache the base only
 * once the transaction that read or made it has committed (a base made by a
 * transaction that rolls back is not there, and another may be made instead).
 */
export async function changeAndBase(db: Queryable, nodeId: string, kind: string, at: Date, body: unknown): Promise<{ change: JsonChange; base: unknown }> {
  const params = [nodeId, kind, utcDay(at), JSON.stringify(body)];
  // Race: a concurrent first body of the day makes ON CONFLICT wait for it and skip, while
  // this statement's snapshot predates it and cannot read it; the next statement can.
  for (let attempt = 0; attempt < 3; attempt++) {
    const { rows } = await db.query<{ made: boolean | null; base: unknown }>(
      `WITH made AS (INSERT INTO status_bases (node_id, kind, day, body) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING RETURNING true AS made)
       SELECT (SELECT made FROM made) AS made, (SELECT body FROM status_bases WHERE node_id = $1 AND kind = $2 AND day = $3) AS base`,
      params,
    );
    if (rows[0].made) return { change: {}, base: JSON.parse(params[3]) };
    if (rows[0].base !== null) return { change: changesBetween(rows[0].base, JSON.parse(params[3])), base: rows[0].base };
  }
  throw new Error(`status base of ${nodeId}/${kind} on ${params[2]}: neither made nor found`);
}

/** A stored row: its change (with the base it needs) or, for rows stored before the changes, its whole body. */
export interface StoredStatusBody {
  node_id: string;
  kind: string;
  created_at: Date;
  change: JsonChange | null;
  body: unknown;
}

/** The bodies of `rows`, in their order: each base read once. */
export async function statusBodies(db: Queryable, rows: readonly StoredStatusBody[]): Promise<unknown[]> {
  const key = (nodeId: string, kind: string, day: string) => `${nodeId}\n${kind}\n${day}`;
  const wanted = new Map<string, [string, string, string]>();
  for (const r of rows) if (r.change !== null) wanted.set(key(r.node_id, r.kind, utcDay(r.created_at)), [r.node_id, r.kind, utcDay(r.created_at)]);
  const bases = new Map<string, unknown>();
  if (wanted.size > 0) {
    const list = [...wanted.values()];
    const { rows: found } = await db.query<{ node_id: string; kind: string; day: string; body: unknown }>(
      `SELECT b.node_id, b.kind, b.day::text AS day, b.body FROM unnest($1::text[], $2::text[], $3::date[]) AS w(node_id, kind, day)
       JOIN status_bases b ON b.node_id = w.node_id AND b.kind = w.kind AND b.day = w.day`,
      [list.map((w) => w[0]), list.map((w) => w[1]), list.map((w) => w[2])],
    );
    for (const b of found) bases.set(key(b.node_id, b.kind, b.day), b.body);
  }
  return rows.map((r) => {
    if (r.change === null) return r.body;
    const k = key(r.node_id, r.kind, utcDay(r.created_at));
    if (!bases.has(k)) throw new Error(`status snapshot of ${r.node_id}/${r.kind} at ${r.created_at.toISOString()}: its base is missing`);
    return applyChanges(bases.get(k), r.change);
  });
}
