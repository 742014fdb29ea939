import { unreachable } from '../decider.js';
import type { AutopeeringPolicy } from '../autopeering/policy.js';
import type { InterfaceRecord, NodeEvent, PeeringRecord, SessionRecord } from './events.js';
import type { NodeFields } from './specs.js';

export type Lifecycle = 'active' | 'decommissioned';

/** A node as its stream tells it. Child records are kept in id order. */
export interface LiveNode {
  status: 'Live';
  node_id: string;
  lifecycle: Lifecycle;
  fields: NodeFields;
  peerings: PeeringRecord[];
  interfaces: InterfaceRecord[];
  sessions: SessionRecord[];
  /** The node's WireGuard key as its agent registered it (absent until then), with the escrowed private key if any. */
  wireguard?: NodeWireguardKey;
  /** Set by `AutopeeringPolicySet`; absent means the defaults (closed). */
  autopeering?: AutopeeringPolicy;
  /** The DNS group the node serves (`NodeDnsGroupAssigned`); absent or null: none. */
  dns_group_id?: number | null;
}

export interface NodeWireguardKey {
  public_key: string;
  /** The private key encrypted to the offline recovery key; null when the agent sent none. */
  private_key_escrow: string | null;
}

export type NodeState = { status: 'Empty' } | { status: 'Deleted'; node_id: string } | LiveNode;

export const initialNodeState = (): NodeState => ({ status: 'Empty' });

export function evolveNode(state: NodeState, event: NodeEvent): NodeState {
  if (event.type === 'NodeCreated') {
    return { status: 'Live', node_id: event.data.node_id, lifecycle: 'active', fields: event.data.fields, peerings: [], interfaces: [], sessions: [] };
  }
  if (state.status !== 'Live') return state;
  switch (event.type) {
    case 'NodeUpdated':
      return { ...state, fields: { ...state.fields, ...event.data.changes } };
    case 'NodeDecommissioned':
      return { ...state, lifecycle: 'decommissioned' };
    case 'NodeRecommissioned':
      return { ...state, lifecycle: 'active' };
    case 'NodeDeleted':
      return { status: 'Deleted', node_id: state.node_id };
    case 'PeeringCreated':
      return { ...state, peerings: [...state.peerings, event.data.peering] };
    case 'PeeringUpdated':
      return { ...state, peerings: state.peerings.map((p) => (p.id === event.data.peering_id ? ({ ...p, ...event.data.changes } as PeeringRecord) : p)) };
    case 'PeeringDeleted':
      // `decide` deletes the peering's interfaces and sessions with events of their own first.
      return { ...state, peerings: state.peerings.filter((p) => p.id !== event.data.peering_id) };
    case 'InterfaceCreated':
      return { ...state, interfaces: [...state.interfaces, event.data.interface] };
    case 'InterfaceUpdated':
      return { ...state, interfaces: state.interfaces.map((i) => (i.id === event.data.interface_id ? { ...i, ...event.data.changes } : i)) };
    case 'InterfaceDeleted':
      return { ...state, interfaces: state.interfaces.filter((i) => i.id !== event.data.interface_id) };
    case 'BgpSessionCreated':
      return { ...state, sessions: [...state.sessions, event.data.session] };
    case 'BgpSessionUpdated':
      return { ...state, sessions: state.sessions.map((s) => (s.id === event.data.session_id ? { ...s, ...event.data.changes } : s)) };
    case 'BgpSessionDeleted':
      return { ...state, sessions: state.sessions.filter((s) => s.id !== event.data.session_id) };
    case 'WireguardKeyRegistered':
      return { ...state, wireguard: { public_key: event.data.public_key, private_key_escrow: event.data.private_key_escrow } };
    case 'WireguardKeyEscrowRefreshed':
      return state.wireguard ? { ...state, wireguard: { ...state.wireguard, private_key_escrow: event.data.private_key_escrow } } : state;
    case 'NodeInventoryReported':
      return { ...state, fields: { ...state.fields, inventory: event.data.inventory } };
    case 'AutopeeringPolicySet':
      return { ...state, autopeering: event.data.policy };
    case 'NodeDnsGroupAssigned':
      return { ...state, dns_group_id: event.data.dns_group_id };
    default:
      return unreachable(event);
  }
}
