import type { ApplyResult } from '../telemetry/reports.js';
import type { Signal } from './signals.js';

/**
 * Signals of facts that no event carries (issue 32): an agent's apply result
 * and the registry replica's sync are stored as rows, not events, so their
 * failures are raised where they are recorded. Pure.
 */

/** An apply that did not succeed (`failed`, or `rolled_back` after a failed step). */
export function applyFailed(apply: ApplyResult, receivedAt: Date): Signal | null {
  if (apply.status === 'succeeded') return null;
  const failedSteps = (apply.steps ?? []).filter((s) => s.status === 'failed').map((s) => `step ${s.name} failed${s.detail ? `: ${s.detail}` : ''}`);
  return {
    id: `apply ${apply.node_id} ${apply.generation} ${apply.finished_at}`,
    kind: 'apply_failed',
    severity: 'warning',
    node_id: apply.node_id,
    nodes: [apply.node_id],
    peer_asn: null,
    group: `apply_failed ${apply.node_id} ${apply.generation}`,
    title: `Apply of generation ${apply.generation} on ${apply.node_id} ${apply.status.replace('_', ' ')}`,
    lines: [...(apply.error ? [apply.error] : []), ...failedSteps],
    // When the server heard of it: an agent's clock may be off, and subscriptions compare with the server's.
    at: receivedAt.toISOString(),
    facts: { generation: apply.generation, status: apply.status, error: apply.error, finished_at: apply.finished_at },
  };
}

/** A registry sync round that failed; one per minute at most by its id, and the subscription's window folds repeats. */
export function registrySyncFailed(message: string, now: Date): Signal {
  const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000).toISOString();
  return {
    id: `registry-sync-failed ${minute}`,
    kind: 'registry_sync_failed',
    severity: 'warning',
    node_id: null,
    nodes: [],
    peer_asn: null,
    group: 'registry_sync_failed',
    title: 'Registry sync failed',
    lines: [message.slice(0, 500)],
    at: now.toISOString(),
    facts: { error: message.slice(0, 500) },
  };
}
