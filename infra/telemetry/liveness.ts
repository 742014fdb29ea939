import type { Queryable } from '../db/pool.js';

export type Liveness = 'online' | 'stale' | 'offline';

/** Document 3: online up to 75 s since the last heartbeat, stale up to 300 s, else offline. */
export const LIVENESS_THRESHOLDS = { online_seconds: 75, stale_seconds: 300 } as const;

/** Liveness by heartbeat freshness; a node that never sent one is offline. Both bounds are inclusive. */
export function livenessOf(lastSeen: Date | null, now: Date): Liveness {
  if (!lastSeen) return 'offline';
  const age = (now.getTime() - lastSeen.getTime()) / 1000;
  if (age <= LIVENESS_THRESHOLDS.online_seconds) return 'online';
  if (age <= LIVENESS_THRESHOLDS.stale_seconds) return 'stale';
  return 'offline';
}

/** What a WebSocket `heartbeat` reports. */
export interface AgentHeartbeat {
  agent_version: string | null;
  applied_generation: number | null;
  apply_status: string | null;
}

export interface AgentStatus extends AgentHeartbeat {
  node_id: string;
  last_seen: Date | null;
}

// Race: two instances may receive heartbeats of the same node (a reconnect moves
// the socket); the older one must not overwrite the newer, hence the guard. The
// statement also answers the version the row held before, so the heartbeat path
// that reacts to a version change needs no second query.
const UPSERT = `
  WITH prior AS (SELECT agent_version FROM agent_liveness WHERE node_id = $1),
  upsert AS (
    INSERT INTO agent_liveness AS l (node_id, agent_version, applied_generation, apply_status, last_seen)
    VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (node_id) DO UPDATE SET
      agent_version = EXCLUDED.agent_version,
      applied_generation = EXCLUDED.applied_generation,
      apply_status = EXCLUDED.apply_status,
      last_seen = EXCLUDED.last_seen
    WHERE l.last_seen <= EXCLUDED.last_seen
  )
  SELECT EXISTS (SELECT 1 FROM prior) AS existed, (SELECT agent_version FROM prior) AS previous`;

/**
 * Upserts the liveness registry row of the node (shared by every instance) and
 * answers the agent version it held before: undefined when the node had no row,
 * null when its agent reported none.
 */
export async function recordHeartbeat(
  db: Queryable,
  nodeId: string,
  heartbeat: AgentHeartbeat,
  now: Date,
): Promise<{ previousVersion: string | null | undefined }> {
  const { rows } = await db.query<{ existed: boolean; previous: string | null }>(UPSERT, [
    nodeId,
    heartbeat.agent_version,
    heartbeat.applied_generation,
    heartbeat.apply_status,
    now,
  ]);
  return { previousVersion: rows[0].existed ? rows[0].previous : undefined };
}

interface LivenessRow {
  node_id: string;
  agent_version: string | null;
  applied_generation: number | null;
  apply_status: string | null;
  last_seen: Date;
}

/** Liveness registry rows, of the given nodes or of all, ordered by node id. Nodes that never sent a heartbeat are absent. */
export async function agentStatuses(db: Queryable, nodeIds?: readonly string[]): Promise<AgentStatus[]> {
  const columns = 'node_id, agent_version, applied_generation, apply_status, last_seen';
  const { rows } = nodeIds
    ? await db.query<LivenessRow>(`SELECT ${columns} FROM agent_liveness WHERE node_id = ANY($1::text[]) ORDER BY node_id`, [nodeIds])
    : await db.query<LivenessRow>(`SELECT ${columns} FROM agent_liveness ORDER BY node_id`);
  return rows.map((r) => ({ ...r }));
}
