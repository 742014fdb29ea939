import type { DomainEvent } from '../decider.js';
import type { BgpState } from './reports.js';

/**
 * Node health, derived from what the agent last reported (contract values; the
 * derivation is ours, see docs/decisions.md). First rule that matches wins:
 *
 * - `unknown`: the node never sent a runtime snapshot;
 * - `stale`: the last snapshot arrived more than 300 s ago (the agent sends one
 *   at least every 60 s; the bound is the liveness `stale` bound);
 * - `down`: the snapshot lists BGP sessions and none is established (the node
 *   carries no traffic for the network);
 * - `degraded`: some BGP session is not established, a container is not running,
 *   the last apply did not succeed, or the last reconciliation failed;
 * - `ok`: otherwise.
 */
export type NodeHealth = 'ok' | 'degraded' | 'stale' | 'down' | 'unknown';
export const NODE_HEALTH_VALUES: readonly NodeHealth[] = ['ok', 'degraded', 'stale', 'down', 'unknown'];

export const SNAPSHOT_STALE_SECONDS = 300;

/** What the health rules read; the telemetry store keeps these per node. */
export interface HealthInputs {
  /** Server time the last runtime snapshot arrived; null: never. */
  snapshot_received_at: Date | null;
  bgp_total: number;
  bgp_established: number;
  containers_not_running: number;
  last_apply_status: string | null;
  last_report_status: string | null;
}

export interface HealthVerdict {
  health: NodeHealth;
  /** Why, in words an operator reads; empty for `ok` and `unknown`. */
  reasons: string[];
}

export function deriveHealth(inputs: HealthInputs, now: Date): HealthVerdict {
  if (!inputs.snapshot_received_at) return { health: 'unknown', reasons: [] };
  const age = (now.getTime() - inputs.snapshot_received_at.getTime()) / 1000;
  if (age > SNAPSHOT_STALE_SECONDS) return { health: 'stale', reasons: [`no runtime snapshot for ${Math.floor(age)} s`] };
  if (inputs.bgp_total > 0 && inputs.bgp_established === 0) return { health: 'down', reasons: [`none of ${inputs.bgp_total} bgp sessions established`] };
  const reasons: string[] = [];
  if (inputs.bgp_established < inputs.bgp_total)
    reasons.push(`${inputs.bgp_total - inputs.bgp_established} of ${inputs.bgp_total} bgp sessions not established`);
  if (inputs.containers_not_running > 0) reasons.push(`${inputs.containers_not_running} containers not running`);
  if (inputs.last_apply_status !== null && inputs.last_apply_status !== 'succeeded') reasons.push(`last apply ${inputs.last_apply_status}`);
  if (inputs.last_report_status === 'failed') reasons.push('last reconciliation failed');
  return { health: reasons.length ? 'degraded' : 'ok', reasons };
}

/** A session Established in two consecutive snapshots whose `since` changed. */
export interface SessionRestart {
  session: string;
  since_before: string;
  since_after: string;
}

/** Transitions of a node's observed state, in the `node-status-<node_id>` stream. */
export type NodeStatusEvent =
  | DomainEvent<'NodeHealthChanged', { node_id: string; from: NodeHealth; to: NodeHealth; reasons: string[] }>
  | DomainEvent<
      'BgpSessionStateChanged',
      { node_id: string; session: string; from: BgpState | 'unknown' | 'absent'; to: BgpState | 'absent'; captured_at?: string }
    >
  /** Both snapshots Established but `since` changed: an implicit reconnect (the state does not change). */
  | DomainEvent<'BgpSessionRestarted', { node_id: string; session: string; since_before: string; since_after: string; captured_at: string }>;

export const NODE_STATUS_EVENT_TYPES: readonly NodeStatusEvent['type'][] = ['NodeHealthChanged', 'BgpSessionStateChanged', 'BgpSessionRestarted'];

export const nodeStatusStream = (nodeId: string): string => `node-status-${nodeId}`;

/** What the transitions recorded so far say. */
export interface NodeStatusState {
  health: NodeHealth;
  sessions: ReadonlyMap<string, BgpState>;
}

export const INITIAL_NODE_STATUS: NodeStatusState = { health: 'unknown', sessions: new Map() };

/** Folds transitions onto `from` (by default: nothing recorded yet); `from` is not changed. */
export function foldNodeStatus(events: readonly NodeStatusEvent[], from: NodeStatusState = INITIAL_NODE_STATUS): NodeStatusState {
  let health = from.health;
  const sessions = new Map(from.sessions);
  for (const e of events) {
    if (e.type === 'NodeHealthChanged') health = e.data.to;
    else if (e.type === 'BgpSessionRestarted') continue;
    else if (e.data.to === 'absent') sessions.delete(e.data.session);
    else sessions.set(e.data.session, e.data.to);
  }
  return { health, sessions };
}

/** A health change is recorded once, when the verdict differs from the recorded health. */
export function decideHealth(nodeId: string, state: NodeStatusState, verdict: HealthVerdict): NodeStatusEvent[] {
  if (verdict.health === state.health) return [];
  return [{ type: 'NodeHealthChanged', data: { node_id: nodeId, from: state.health, to: verdict.health, reasons: verdict.reasons } }];
}

/**
 * Session flap comparison: every session whose state differs from the recorded
 * one is a transition (a session seen for the first time comes from `unknown`;
 * one missing from the snapshot goes to `absent`), and every session in
 * `restarted` (domain/flaps/session.ts `detectRestarts`, against the previous
 * snapshot) that stays Established is a restart. Sorted by name.
 */
export function decideSessions(
  nodeId: string,
  state: NodeStatusState,
  observed: readonly { name: string; state: BgpState; since?: string | null }[],
  capturedAt: string,
  restarted: readonly SessionRestart[] = [],
): NodeStatusEvent[] {
  const now = new Map(observed.map((p) => [p.name, p.state]));
  const names = [...new Set([...state.sessions.keys(), ...now.keys()])].sort();
  const events: NodeStatusEvent[] = [];
  for (const session of names) {
    const before = state.sessions.get(session);
    const after = now.get(session);
    if (before === after) continue;
    events.push({
      type: 'BgpSessionStateChanged',
      data: { node_id: nodeId, session, from: before ?? 'unknown', to: after ?? 'absent', captured_at: capturedAt },
    });
  }
  // A restart only where the recorded state agrees that the session stayed Established.
  for (const r of restarted) {
    if (state.sessions.get(r.session) !== 'established' || now.get(r.session) !== 'established') continue;
    events.push({ type: 'BgpSessionRestarted', data: { node_id: nodeId, ...r, captured_at: capturedAt } });
  }
  return events;
}
