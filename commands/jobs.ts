import { randomUUID } from 'node:crypto';
import type { Doorbell, DoorbellEvent } from '../domain/doorbell.js';
import { runTimeoutMs, type JobKind, type JobSpec } from '../domain/probes/jobs.js';
import type { Pool } from '../infra/db/pool.js';
import { jobStore } from '../infra/jobs/store.js';
import { connectedNode } from './notify.js';

/** What starting a probe or log job needs: the job table's pool, the doorbell to the agent, the service clock. */
export interface JobDeps {
  pool: Pool;
  doorbell: Doorbell;
  now: () => Date;
}

/**
 * Starts a probe or log job on a node's agent (the console's `/ui/probes`,
 * `/ui/logs` and the portal's probes): checks node and agent (404, 409), takes
 * a quota seat with the job row (429), then rings the agent. The ring comes
 * after the row committed, so the agent's stream finds the job. Answers the job id.
 */
export async function startJob(deps: JobDeps, kind: JobKind, nodeId: string, spec: JobSpec): Promise<string> {
  await connectedNode(deps.pool, nodeId);
  const id = randomUUID();
  await jobStore.create(deps.pool, { id, kind, node_id: nodeId, spec, run_ms: runTimeoutMs(kind, spec) }, deps.now());
  const request: DoorbellEvent =
    kind === 'probe'
      ? { type: 'probe_request', node_id: nodeId, probe_id: id, spec: { ...spec } }
      : { type: 'log_request', node_id: nodeId, log_id: id, spec: { ...spec } };
  await deps.doorbell.ring([request]);
  return id;
}
