import { fileURLToPath } from 'node:url';
import { foldNodeStatus, NODE_STATUS_EVENT_TYPES, type NodeStatusEvent } from '../../domain/telemetry/health.js';
import type { RecordedEvent, TransactionContext } from '../../infra/eventstore/types.js';
import type { Projection } from '../runtime/projection.js';
import { currentNodeStatuses, type CurrentNodeStatus } from './queries.js';

/**
 * `node_status_current`: per node, the health and BGP session states its
 * `node-status-<node_id>` stream recorded, and the stream version they stand at.
 * Inline, so a report decides its transitions from the row its predecessor wrote
 * (one primary-key read, however long the stream has grown).
 *
 * A row exists only while it is the fold of the stream from version 0: an event
 * that does not follow the row's version (the projection was added after the
 * stream began) removes it, and the commands fall back to reading the stream
 * until `projections rebuild node-status` restores it.
 */
export const nodeStatusProjection: Projection = {
  name: 'node-status',
  mode: 'inline',
  handles: NODE_STATUS_EVENT_TYPES,
  tables: ['node_status_current'],
  migrations: { name: 'node-status', dir: fileURLToPath(new URL('./migrations', import.meta.url)) },
  apply: (tx, event) => applyNodeStatus(tx, [event]),
  applyBatch: applyNodeStatus,
};

/** Folds the events per node onto its row and writes each touched row once (a rebuild updates a row once per batch, not per event). */
async function applyNodeStatus(tx: TransactionContext, events: readonly RecordedEvent[]): Promise<void> {
  const byNode = new Map<string, RecordedEvent[]>();
  for (const e of events) {
    const nodeId = (e.data as NodeStatusEvent['data']).node_id;
    byNode.set(nodeId, [...(byNode.get(nodeId) ?? []), e]);
  }
  const rows = await currentNodeStatuses(tx, [...byNode.keys()]);
  const upserts: [string, CurrentNodeStatus][] = [];
  const broken: string[] = [];
  for (const [nodeId, mine] of byNode) {
    const next = foldContiguous(rows.get(nodeId), mine);
    if (next) upserts.push([nodeId, next]);
    else broken.push(nodeId);
  }
  if (broken.length > 0) await tx.query(`DELETE FROM node_status_current WHERE node_id = ANY($1::text[])`, [broken]);
  if (upserts.length === 0) return;
  await tx.query(
    `INSERT INTO node_status_current (node_id, health, sessions, version)
     SELECT n, h, s::jsonb, v FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS r(n, h, s, v)
     ON CONFLICT (node_id) DO UPDATE SET health = EXCLUDED.health, sessions = EXCLUDED.sessions, version = EXCLUDED.version`,
    [
      upserts.map(([n]) => n),
      upserts.map(([, r]) => r.state.health),
      upserts.map(([, r]) => JSON.stringify(Object.fromEntries(r.state.sessions))),
      upserts.map(([, r]) => r.version),
    ],
  );
}

/**
 * The row after the events, or undefined when they do not continue it: an event
 * at or below the row's version is already in it; one beyond the next version
 * means events are missing, and no row is better than a wrong one.
 */
function foldContiguous(row: CurrentNodeStatus | undefined, events: readonly RecordedEvent[]): CurrentNodeStatus | undefined {
  let version = row?.version ?? -1;
  const fresh = events.filter((e) => e.version > version);
  for (const e of fresh) {
    if (e.version !== version + 1) return undefined;
    version = e.version;
  }
  if (fresh.length === 0) return row;
  const state = foldNodeStatus(
    fresh.map((e) => ({ type: e.type, data: e.data }) as NodeStatusEvent),
    row?.state,
  );
  return { state, version };
}
