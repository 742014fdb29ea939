import type { Queryable } from '../db/pool.js';
import { statusBodies, type StoredStatusBody } from './status-bodies.js';
import { asStatusEvent, FOLDED_CANDIDATES, foldedById, foldedLean } from './status-compaction.js';
import type { StatusEventKind, StatusEventRow } from './store.js';

/** A status event without its payload: what a list shows. */
export type LeanStatusEvent = Omit<StatusEventRow, 'payload'>;

const iso = (t: Date | string) => new Date(t).toISOString();

/** A node's status events newest first, optionally of one kind, only those with an id below `beforeId` (the cursor). */
export async function leanStatusEvents(
  db: Queryable,
  nodeId: string,
  page: { kind?: StatusEventKind; limit: number; beforeId?: number },
): Promise<LeanStatusEvent[]> {
  const { rows } = await db.query(
    `SELECT * FROM (
       (SELECT id, kind, generation, status, created_at, drift_count FROM status_snapshots
        WHERE node_id = $1 AND ($2::text IS NULL OR kind = $2) AND ($3::bigint IS NULL OR id < $3) ORDER BY id DESC LIMIT $4)
       UNION ALL
       (${foldedLean(FOLDED_CANDIDATES)} WHERE ($3::bigint IS NULL OR u.id < $3))
     ) e ORDER BY id DESC LIMIT $4`,
    [nodeId, page.kind ?? null, page.beforeId ?? null, page.limit],
  );
  return rows.map((r: Record<string, any>) => ({
    id: Number(r.id),
    kind: r.kind,
    generation: r.generation,
    status: r.status,
    created_at: iso(r.created_at),
    drift_count: r.drift_count,
  }));
}

/** One status event with its node and whole body; undefined when there is none with that id. */
export async function statusEventById(db: Queryable, id: number): Promise<(StatusEventRow & { node_id: string }) | undefined> {
  const { rows } = await db.query(`SELECT id, node_id, kind, generation, status, drift_count, created_at, change, body FROM status_snapshots WHERE id = $1`, [
    id,
  ]);
  const r = rows[0];
  if (!r) {
    const e = await foldedById(db, id);
    return e && asStatusEvent<StatusEventKind>(e);
  }
  const [payload] = await statusBodies(db, [r as StoredStatusBody]);
  return {
    id: Number(r.id),
    node_id: r.node_id,
    kind: r.kind,
    generation: r.generation,
    status: r.status,
    drift_count: r.drift_count,
    created_at: iso(r.created_at),
    payload,
  };
}
