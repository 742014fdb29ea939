import type { DomainEvent } from '../decider.js';
import type { AutopeeringPolicy } from '../autopeering/policy.js';
import type { InterfaceSpec, NodeFields, NodePatch, PeeringPatch, SessionSpec } from './specs.js';

/**
 * Events of the `node-<node_id>` stream: the node's configuration and its child
 * records. Desired-state generations live in their own stream (`desired-state-<node_id>`),
 * so a command on a node never reads the large snapshots.
 */

export interface PeeringRecord {
  id: number;
  name: string;
  remote_asn: number;
  remote_node_id: string | null;
  remote_label: string | null;
  is_internal: boolean;
  enabled: boolean;
  notes: string | null;
}

export interface InterfaceRecord {
  id: number;
  peering_id: number | null;
  enabled: boolean;
  sort_order: number;
  spec: InterfaceSpec;
}

export interface SessionRecord {
  id: number;
  peering_id: number | null;
  sort_order: number;
  spec: SessionSpec;
}

export type InterfaceChanges = Partial<Omit<InterfaceRecord, 'id'>>;
export type SessionChanges = Partial<Omit<SessionRecord, 'id'>>;

export type NodeEvent =
  | DomainEvent<'NodeCreated', { node_id: string; fields: NodeFields }>
  | DomainEvent<'NodeUpdated', { node_id: string; changes: NodePatch }>
  | DomainEvent<'NodeDecommissioned', { node_id: string }>
  | DomainEvent<'NodeRecommissioned', { node_id: string }>
  | DomainEvent<'NodeDeleted', { node_id: string }>
  | DomainEvent<'PeeringCreated', { node_id: string; peering: PeeringRecord }>
  | DomainEvent<'PeeringUpdated', { node_id: string; peering_id: number; changes: PeeringPatch }>
  | DomainEvent<'PeeringDeleted', { node_id: string; peering_id: number }>
  | DomainEvent<'InterfaceCreated', { node_id: string; interface: InterfaceRecord }>
  | DomainEvent<'InterfaceUpdated', { node_id: string; interface_id: number; changes: InterfaceChanges }>
  | DomainEvent<'InterfaceDeleted', { node_id: string; interface_id: number }>
  | DomainEvent<'BgpSessionCreated', { node_id: string; session: SessionRecord }>
  | DomainEvent<'BgpSessionUpdated', { node_id: string; session_id: number; changes: SessionChanges }>
  | DomainEvent<'BgpSessionDeleted', { node_id: string; session_id: number }>
  | DomainEvent<'WireguardKeyRegistered', { node_id: string; public_key: string; private_key_escrow: string | null }>
  | DomainEvent<'WireguardKeyEscrowRefreshed', { node_id: string; private_key_escrow: string }>
  /** The inventory an agent reported when its registration was accepted; replaces `fields.inventory`. */
  | DomainEvent<'NodeInventoryReported', { node_id: string; inventory: Record<string, unknown> }>
  /** The node's whole autopeering policy after a PUT or PATCH (domain/autopeering/policy.ts). */
  | DomainEvent<'AutopeeringPolicySet', { node_id: string; policy: AutopeeringPolicy }>
  /** The node joined a DNS group (id) or left its group (null); appended with the group's `DnsGroupMemberJoined`/`Left` (domain/dns). */
  | DomainEvent<'NodeDnsGroupAssigned', { node_id: string; dns_group_id: number | null }>;

export type NodeEventType = NodeEvent['type'];

export const NODE_EVENT_TYPES: readonly NodeEventType[] = [
  'NodeCreated',
  'NodeUpdated',
  'NodeDecommissioned',
  'NodeRecommissioned',
  'NodeDeleted',
  'PeeringCreated',
  'PeeringUpdated',
  'PeeringDeleted',
  'InterfaceCreated',
  'InterfaceUpdated',
  'InterfaceDeleted',
  'BgpSessionCreated',
  'BgpSessionUpdated',
  'BgpSessionDeleted',
  'WireguardKeyRegistered',
  'WireguardKeyEscrowRefreshed',
  'NodeInventoryReported',
  'AutopeeringPolicySet',
  'NodeDnsGroupAssigned',
];

export const nodeStream = (nodeId: string): string => `node-${nodeId}`;
