// STUB — owned by the probes-and-logs helper, who replaces the bodies. Signatures are the agreed interface.
import type { WebSocket } from 'ws';
import type { ServiceContext } from '../../shared/context.js';
import type { AgentPrincipal } from './auth.js';

export type JobKind = 'probe' | 'log';

/**
 * Takes over an accepted `WS /agent/probe-stream/{id}` or `/agent/log-stream/{id}` connection
 * whose agent token already resolved (the hub closed unresolvable ones with 4401).
 * Closes with 4403 when the job is unknown, expired or belongs to another node;
 * otherwise relays `output`/`log`/`done` frames to the job's subscribers.
 */
export async function acceptJobStream(_ctx: ServiceContext, _kind: JobKind, _jobId: string, _agent: AgentPrincipal, ws: WebSocket): Promise<void> {
  ws.close(4403, 'job streams not implemented yet');
}
