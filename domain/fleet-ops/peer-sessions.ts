import { NotFound } from '../errors.js';
import type { NodeEvent, SessionRecord } from '../node/events.js';
import type { SessionSpec } from '../node/specs.js';
import type { LiveNode } from '../node/state.js';
import type { DisabledSession } from './mitigation-log.js';

/**
 * Peer-disable and peer-enable: the `enabled` flag of every eBGP session of one
 * AS, on every node (decommissioned ones too, so a recommission does not bring
 * a disabled peer back). A disabled session leaves the desired state (protocol
 * removed); its interface stays, so the tunnel is kept.
 */

export interface PeerSession {
  node_id: string;
  session: SessionRecord;
}

/** eBGP: not on an internal peering and towards another AS than the node's own. */
export function isEbgp(node: LiveNode, session: SessionRecord): boolean {
  const peering = session.peering_id === null ? undefined : node.peerings.find((p) => p.id === session.peering_id);
  return !peering?.is_internal && session.spec.remote_asn !== node.fields.asn;
}

/** The eBGP sessions of AS `asn`, by node id then session id; none is 404 `no bgp sessions with remote_asn <asn>`. */
export function sessionsOfAs(nodes: readonly LiveNode[], asn: number): PeerSession[] {
  const found = nodes
    .flatMap((node) => node.sessions.filter((s) => s.spec.remote_asn === asn && isEbgp(node, s)).map((session) => ({ node_id: node.node_id, session })))
    .sort((a, b) => (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : a.session.id - b.session.id));
  if (found.length === 0) throw new NotFound(`no bgp sessions with remote_asn ${asn}`);
  return found;
}

const isOn = (spec: SessionSpec) => spec.enabled !== false;

export interface PeerPlan<T> {
  events: Map<string, NodeEvent[]>;
  /** What the mitigation log records. */
  log: T[];
}

/** Turns off every enabled eBGP session of the AS, remembering what each `enabled` was. */
export function planPeerDisable(nodes: readonly LiveNode[], asn: number): PeerPlan<DisabledSession> {
  const plan: PeerPlan<DisabledSession> = { events: new Map(), log: [] };
  for (const { node_id, session } of sessionsOfAs(nodes, asn)) {
    if (!isOn(session.spec)) continue;
    push(plan.events, node_id, {
      type: 'BgpSessionUpdated',
      data: { node_id, session_id: session.id, changes: { spec: { ...session.spec, enabled: false } } },
    });
    plan.log.push({ node_id, session_id: session.id, enabled_before: session.spec.enabled === true ? true : null });
  }
  return plan;
}

/**
 * Turns back on the sessions a peer-disable turned off (`disabled`) that are
 * still off, with `enabled` as it was; sessions disabled by hand stay off.
 */
export function planPeerEnable(
  nodes: readonly LiveNode[],
  asn: number,
  disabled: readonly DisabledSession[],
): PeerPlan<{ node_id: string; session_id: number }> {
  const plan: PeerPlan<{ node_id: string; session_id: number }> = { events: new Map(), log: [] };
  for (const { node_id, session } of sessionsOfAs(nodes, asn)) {
    const mine = disabled.find((d) => d.node_id === node_id && d.session_id === session.id);
    if (!mine || isOn(session.spec)) continue;
    const { enabled: _off, ...rest } = session.spec;
    const spec: SessionSpec = mine.enabled_before === true ? { ...rest, enabled: true } : rest;
    push(plan.events, node_id, { type: 'BgpSessionUpdated', data: { node_id, session_id: session.id, changes: { spec } } });
    plan.log.push({ node_id, session_id: session.id });
  }
  return plan;
}

function push(events: Map<string, NodeEvent[]>, nodeId: string, event: NodeEvent): void {
  events.set(nodeId, [...(events.get(nodeId) ?? []), event]);
}
