// STUB — owned by the agent-reports helper, who replaces the bodies. Signatures are the agreed interface.
import type { Queryable } from '../db/pool.js';

export type Liveness = 'online' | 'stale' | 'offline';

/** Document 3: online up to 75 s since the last heartbeat, stale up to 300 s, else offline. */
export const LIVENESS_THRESHOLDS = { online_seconds: 75, stale_seconds: 300 } as const;

export function livenessOf(_lastSeen: Date | null, _now: Date): Liveness {
  throw new Error('livenessOf: not implemented yet');
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

/** Upserts the liveness registry row of the node (shared by every instance). */
export async function recordHeartbeat(_db: Queryable, _nodeId: string, _heartbeat: AgentHeartbeat, _now: Date): Promise<void> {
  throw new Error('recordHeartbeat: not implemented yet');
}

/** Liveness registry rows, of the given nodes or of all. Nodes that never sent a heartbeat are absent. */
export async function agentStatuses(_db: Queryable, _nodeIds?: readonly string[]): Promise<AgentStatus[]> {
  throw new Error('agentStatuses: not implemented yet');
}
