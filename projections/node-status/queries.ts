import type { NodeHealth, NodeStatusState } from '../../domain/telemetry/health.js';
import type { BgpState } from '../../domain/telemetry/reports.js';
import type { TransactionContext } from '../../infra/eventstore/types.js';

/** A node's recorded state and the version of its `node-status-<node_id>` stream it was folded up to. */
export interface CurrentNodeStatus {
  state: NodeStatusState;
  version: number;
}

type Db = Pick<TransactionContext, 'query'>;

function fromRow(r: { health: string; sessions: Record<string, string>; version: number }): CurrentNodeStatus {
  return { state: { health: r.health as NodeHealth, sessions: new Map(Object.entries(r.sessions) as [string, BgpState][]) }, version: r.version };
}

/** Rows of `node_status_current` by node id (nodes without a row are left out). */
export async function currentNodeStatuses(db: Db, nodeIds: readonly string[]): Promise<Map<string, CurrentNodeStatus>> {
  const { rows } = await db.query(`SELECT node_id, health, sessions, version FROM node_status_current WHERE node_id = ANY($1::text[])`, [nodeIds]);
  return new Map(rows.map((r) => [r.node_id as string, fromRow(r)]));
}

/** One node's row; undefined when its stream is empty (or the projection has not been rebuilt since it was added). */
export async function currentNodeStatus(db: Db, nodeId: string): Promise<CurrentNodeStatus | undefined> {
  return (await currentNodeStatuses(db, [nodeId])).get(nodeId);
}

/** The health each node's transitions recorded last, by node id (nodes without a row are left out: nothing recorded). */
export async function recordedHealths(db: Db): Promise<Map<string, NodeHealth>> {
  const { rows } = await db.query(`SELECT node_id, health FROM node_status_current`);
  return new Map(rows.map((r) => [r.node_id as string, r.health as NodeHealth]));
}
