import type { FleetContext, NodeFacts } from '../../../domain/desired-state/context.js';
import type { InterfaceRecord, PeeringRecord, SessionRecord } from '../../../domain/node/events.js';
import type { InterfaceSpec, NodeFields, SessionSpec } from '../../../domain/node/specs.js';
import type { LiveNode } from '../../../domain/node/state.js';

/** A syntactically valid WireGuard public key made of one letter. */
export const key = (letter: string): string => `${letter.repeat(42)}A=`;

export function liveNode(
  fields: Partial<NodeFields> = {},
  children: Partial<Pick<LiveNode, 'peerings' | 'interfaces' | 'sessions' | 'lifecycle'>> = {},
): LiveNode {
  return {
    status: 'Live',
    node_id: 'fra1',
    lifecycle: children.lifecycle ?? 'active',
    fields: {
      asn: 4242420001,
      router_id: '172.20.0.1',
      site: 'fra',
      loopback_ipv4: '172.20.0.1',
      loopback_ipv6: 'fd00:1::1',
      link_local: 'fe80::1',
      ipv4_prefixes: ['172.20.0.0/27'],
      ipv6_prefixes: ['fd00:1::/48'],
      ...fields,
    },
    peerings: children.peerings ?? [],
    interfaces: children.interfaces ?? [],
    sessions: children.sessions ?? [],
  };
}

export const peering = (id: number, overrides: Partial<PeeringRecord> = {}): PeeringRecord => ({
  id,
  name: `peer${id}`,
  remote_asn: 4242420000 + id,
  remote_node_id: null,
  remote_label: null,
  is_internal: false,
  enabled: true,
  notes: null,
  ...overrides,
});

export const iface = (id: number, spec: Partial<InterfaceSpec> = {}, overrides: Partial<Omit<InterfaceRecord, 'spec'>> = {}): InterfaceRecord => ({
  id,
  peering_id: null,
  enabled: true,
  sort_order: 0,
  spec: { name: `wg${id}`, kind: 'wireguard', ...spec },
  ...overrides,
});

export const session = (id: number, spec: Partial<SessionSpec> = {}, overrides: Partial<Omit<SessionRecord, 'spec'>> = {}): SessionRecord => ({
  id,
  peering_id: null,
  sort_order: 0,
  spec: { name: `s${id}`, remote_asn: 4242420000 + id, neighbor_address: `fe80::${id + 1}`, interface: `wg${id}`, ...spec },
  ...overrides,
});

export const facts = (node_id: string, overrides: Partial<NodeFacts> = {}): NodeFacts => ({
  node_id,
  asn: 4242420001,
  router_id: `172.20.0.${node_id.length}`,
  site: null,
  loopback_ipv4: null,
  loopback_ipv6: null,
  link_local: null,
  lifecycle: 'active',
  wireguard_public_key: null,
  ...overrides,
});

export const context = (nodes: NodeFacts[] = [], overrides: Partial<FleetContext> = {}): FleetContext => ({
  nodes: new Map(nodes.map((n) => [n.node_id, n])),
  inbound: [],
  wireguard_public_key: null,
  ...overrides,
});
