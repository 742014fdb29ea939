import type { ReconciliationReport } from '../../domain/telemetry/reports.js';
import type { AgentRuntime } from '../runtime.js';
import { records } from './records.js';

/**
 * Tells the control server about an update that did not happen (hash
 * mismatch, unpack failure, health-gate restore): a reconciliation report with
 * status `drift` and one item `{kind: 'agent_update', name: <version>, detail}`.
 * It lands in the node's status events (kind `report`) and its health view; the
 * next regular reconcile report replaces it as the latest. The error also goes
 * to the log, so the next runtime snapshot's `last_error_message` names it.
 */
export async function reportUpdateProblem(rt: AgentRuntime, version: string, detail: string): Promise<void> {
  rt.logger.error({ version }, `agent update ${version}: ${detail}`);
  const report: ReconciliationReport = {
    node_id: rt.nodeId,
    generation: rt.applied().generation,
    captured_at: new Date().toISOString(),
    status: 'drift',
    drift_items: [{ kind: 'agent_update', name: version, detail: detail.slice(0, 2000) }],
    error: detail.slice(0, 2000),
  };
  const res = await rt.request('POST', '/agent/reconciliation-report', report);
  if (res.status !== 200) rt.logger.warn({ status: res.status }, 'agent update problem report refused');
}

/** Reports what the last installer run left (once; the record is removed after). */
export async function settleInstallResult(rt: AgentRuntime): Promise<void> {
  const result = await records.result.read(rt.stateDir);
  if (!result) return;
  if (result.status === 'installed')
    rt.logger.info({ version: result.version, previous: result.previous }, `agent updated from ${result.previous} to ${result.version}`);
  else await reportUpdateProblem(rt, result.version, result.detail ?? result.status);
  await records.result.clear(rt.stateDir);
}
