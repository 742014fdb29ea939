import { isDeepStrictEqual } from 'node:util';
import { unreachable } from '../decider.js';
import type { NodeEvent, PeeringRecord } from '../node/events.js';
import type { NodeState } from '../node/state.js';

/**
 * How a node write changes desired states, decided from its events alone.
 *
 * - `publish`: the written node's own document. `always` re-materialises it
 *   (child writes, recommission), `if-published` only once it has a first
 *   generation (node PATCH), `empty` publishes the empty desired state
 *   (decommission), `none` publishes nothing.
 * - `topology`: the write changes facts other nodes materialise from (router id,
 *   loopbacks, lifecycle, internal links, the topology template): the nodes that
 *   refer to this one, or that it refers to, are re-materialised too.
 * - `inboundPeers`: the nodes whose enabled internal peerings point at this one
 *   read a fact that changed (its WireGuard key), without the wider topology fan-out.
 */
export interface NodePublications {
  publish: Publish;
  topology: boolean;
  inboundPeers: boolean;
}

export type Publish = 'always' | 'if-published' | 'empty' | 'none';

/** A node write as decided: its events, and the node before and after them. */
export interface DecidedNodeWrite {
  events: readonly NodeEvent[];
  before: NodeState;
  after: NodeState;
}

/** Node fields other nodes materialise from (`NodeFacts`), besides the topology part of `base_template`. */
const FACT_FIELDS = ['asn', 'router_id', 'site', 'loopback_ipv4', 'loopback_ipv6', 'link_local'] as const;

/** The keys route tuning owns in `base_template.bird` (domain/desired-state/route-tuning.ts): read by the node's own document only. */
const ROUTE_TUNING_KEYS = ['cold_potato_med', 'route_local_pref'] as const;

/** Stronger wins when a write's events ask for different publications. */
const STRENGTH: Record<Publish, number> = { none: 0, 'if-published': 1, always: 2, empty: 3 };

/** What a decided node write publishes: each event's effect, the strongest `publish` and any topology change. */
export function publicationsFor(write: DecidedNodeWrite): NodePublications {
  const out: NodePublications = { publish: 'none', topology: false, inboundPeers: false };
  for (const event of write.events) {
    const effect = effectOf(event, write);
    if (STRENGTH[effect.publish] > STRENGTH[out.publish]) out.publish = effect.publish;
    out.topology ||= effect.topology ?? false;
    out.inboundPeers ||= effect.inboundPeers ?? false;
  }
  return out;
}

type Effect = { publish: Publish; topology?: boolean; inboundPeers?: boolean };

function effectOf(event: NodeEvent, { before, after }: DecidedNodeWrite): Effect {
  switch (event.type) {
    // A node that others already name in their topology appears there (or leaves it).
    case 'NodeCreated':
    case 'NodeDeleted':
      return { publish: 'none', topology: true };
    case 'NodeDecommissioned':
      return { publish: 'empty', topology: true };
    case 'NodeRecommissioned':
      return { publish: 'always', topology: true };
    case 'NodeUpdated':
      return { publish: 'if-published', topology: changesFacts(event.data.changes, before, after) };
    case 'PeeringCreated':
      return { publish: 'always', topology: isInternalLink(event.data.peering) };
    case 'PeeringUpdated':
      return {
        publish: 'always',
        topology: isInternalLink(peeringOf(before, event.data.peering_id)) || isInternalLink(peeringOf(after, event.data.peering_id)),
      };
    case 'PeeringDeleted':
      return { publish: 'always', topology: isInternalLink(peeringOf(before, event.data.peering_id)) };
    case 'InterfaceCreated':
    case 'InterfaceUpdated':
    case 'InterfaceDeleted':
    case 'BgpSessionCreated':
    case 'BgpSessionUpdated':
    case 'BgpSessionDeleted':
    case 'NodeDnsGroupAssigned': // a node joining or leaving a DNS group gets (or loses) its `dns` section
      return { publish: 'always' };
    // Peers' internal links carry the key; the node's own document does not change.
    case 'WireguardKeyRegistered':
      return { publish: 'none', inboundPeers: true };
    // Not part of any desired state.
    case 'WireguardKeyEscrowRefreshed':
    case 'NodeInventoryReported':
    case 'AutopeeringPolicySet':
      return { publish: 'none' };
    default:
      return unreachable(event);
  }
}

/**
 * Whether a node update changes what other nodes read of it: an addressing
 * field, or its `base_template` beyond the route-tuning keys (which only its
 * own document reads; the console's route tuning is no topology write).
 */
function changesFacts(changes: object, before: NodeState, after: NodeState): boolean {
  if (FACT_FIELDS.some((field) => field in changes)) return true;
  if (!('base_template' in changes)) return false;
  return !isDeepStrictEqual(withoutRouteTuning(templateOf(before)), withoutRouteTuning(templateOf(after)));
}

type Template = Record<string, unknown>;

function templateOf(state: NodeState): Template {
  return state.status === 'Live' ? (state.fields.base_template ?? {}) : {};
}

function withoutRouteTuning(template: Template): Template {
  const { bird, ...others } = template as Template & { bird?: Record<string, unknown> };
  if (!bird) return template;
  const rest = Object.fromEntries(Object.entries(bird).filter(([key]) => !(ROUTE_TUNING_KEYS as readonly string[]).includes(key)));
  return Object.keys(rest).length > 0 ? { ...others, bird: rest } : others;
}

function peeringOf(state: NodeState, peeringId: number): PeeringRecord | undefined {
  return state.status === 'Live' ? state.peerings.find((p) => p.id === peeringId) : undefined;
}

/** An internal peering with a remote node: both ends materialise from each other. */
export function isInternalLink(peering: Pick<PeeringRecord, 'is_internal' | 'remote_node_id'> | undefined): boolean {
  return !!peering?.is_internal && !!peering.remote_node_id;
}
