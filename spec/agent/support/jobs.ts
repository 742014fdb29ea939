import { randomUUID } from 'node:crypto';
import { runTimeoutMs, type JobKind, type JobSpec } from '../../../domain/probes/jobs.js';
import { jobStore } from '../../../infra/jobs/store.js';
import { openSse, type SseStream } from '../../http/control/probes/support.js';
import { ADMIN_TOKEN, type OpsServer } from './ops.js';

/**
 * A waiting probe or log job in the server's job table, as `POST /ui/probes`
 * would create it but without its target policy (which refuses loopback, the
 * only address a test can really ping). The agent's stream attaches to it.
 */
export async function createJob(server: OpsServer, kind: JobKind, spec: JobSpec): Promise<string> {
  const id = randomUUID();
  const ctx = server.control.sys.context;
  await jobStore.create(ctx.pool, { id, kind, node_id: server.nodeId, spec, run_ms: runTimeoutMs(kind, spec) }, ctx.now());
  return id;
}

/** The operator's SSE view of a job (`/ui/probes/{id}/stream` or `/ui/logs/{id}/stream`). */
export const jobEvents = (server: OpsServer, kind: JobKind, id: string): Promise<SseStream> =>
  openSse(`${server.control.url}/control/v1/ui/${kind === 'probe' ? 'probes' : 'logs'}/${id}/stream`, ADMIN_TOKEN);
