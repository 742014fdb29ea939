import type { ApplyResult, ReconciliationReport } from '../domain/telemetry/reports.js';
import type { StepResult } from './apply/types.js';
import type { FilePlan } from './files/plan.js';
import { detailOf } from './http.js';
import type { AgentRuntime } from './runtime.js';

export type DriftItem = ReconciliationReport['drift_items'][number];

/** The server's message limit (2000 characters); longer command output is cut, not refused. */
const MESSAGE_MAX = 2000;
export const clip = (text: string | null | undefined): string | null =>
  text == null ? null : text.length <= MESSAGE_MAX ? text : `${text.slice(0, MESSAGE_MAX - 1)}…`;

/** Files that differ from what the applied generation renders to: someone or something changed them on the node. */
export function driftItems(plan: FilePlan): DriftItem[] {
  const item = (name: string, detail: string): DriftItem => ({ kind: 'file', name: name.slice(0, 128), detail });
  return [
    ...plan.added.map((p) => item(p, 'missing on the node')),
    ...plan.changed.map((p) => item(p, 'content or mode differs from the desired state')),
    ...plan.removed.map((p) => item(p, 'not part of the desired state')),
  ].slice(0, 1000);
}

/** `POST /agent/apply-result`; a failure to report is logged, never thrown (the apply already happened). */
export async function postApplyResult(
  rt: AgentRuntime,
  result: { generation: number; status: ApplyResult['status']; started_at: Date; error: string | null; steps: StepResult[] },
): Promise<void> {
  const body: ApplyResult = {
    node_id: rt.nodeId,
    generation: result.generation,
    status: result.status,
    started_at: result.started_at.toISOString(),
    finished_at: new Date().toISOString(),
    error: clip(result.error),
    steps: result.steps.slice(0, 200).map((s) => ({ name: s.name.slice(0, 128), status: s.status, detail: clip(s.detail) })),
  };
  await post(rt, '/agent/apply-result', body);
}

/** `POST /agent/reconciliation-report`; logged on failure like the apply result. */
export async function postReconciliation(rt: AgentRuntime, report: Omit<ReconciliationReport, 'node_id' | 'captured_at'>): Promise<void> {
  const body: ReconciliationReport = {
    node_id: rt.nodeId,
    captured_at: new Date().toISOString(),
    ...report,
    ...(report.error !== undefined ? { error: clip(report.error) } : {}),
  };
  await post(rt, '/agent/reconciliation-report', body);
}

async function post(rt: AgentRuntime, path: string, body: object): Promise<void> {
  try {
    const answer = await rt.request('POST', path, body);
    if (answer.status !== 200) rt.logger.error({ path, status: answer.status }, `report refused: ${detailOf(answer)}`);
  } catch (err) {
    rt.logger.warn({ err, path }, 'report not delivered: control server unreachable');
  }
}
