import { FAMILIES, ibgpProtocolName, PROTOCOL, shownProtocolName, type Family } from '../desired-state/bird-names.js';
import { networkOf } from '../net/ip.js';
import type { DesiredState, Router } from '../desired-state/schema.js';

/**
 * The console's iBGP and OSPF view of one node (`GET /ui/nodes/{id}/internal-topology`):
 * the internal topology of its published desired state, why each router is
 * there, and liveness hints read from the node's latest routing table. Pure:
 * the caller loads the inputs.
 *
 * Hints: `rib_routes` counts the table's routes whose protocol is the one the
 * agent renders for that session (`domain/desired-state/bird-names.ts`); the
 * table holds each prefix's best route only, so a route a session learnt but
 * lost to another path is not counted. `in_rib` says whether the host route of
 * an address (a neighbour's loopback, a host's address) is in the table. Both are
 * null while the node has reported no table (0 and false are measurements).
 */

/** Why a router is an iBGP neighbour: named in the template, the remote of an own internal peering, the node of an internal peering pointing here. */
export type RouterSource = 'template' | 'peering' | 'inbound';

export interface TopologyInputs {
  node_id: string;
  generation: number;
  state: DesiredState;
  /** `base_template.bird.internal_topology.routers` as configured. */
  template_routers: readonly string[];
  /** Remotes of the node's enabled internal peerings. */
  peering_remotes: readonly string[];
  /** Nodes whose enabled internal peerings point at this node. */
  inbound: readonly string[];
  table: RoutingHints | null;
}

/** What the view reads from the node's latest routing table. */
export interface RoutingHints {
  captured_at: string;
  /** Routes by protocol name as BIRD shows it. */
  routes_by_protocol: ReadonlyMap<string, number>;
  /** Which of the asked prefixes (`hostPrefixes`) the table holds, canonical. */
  present: ReadonlySet<string>;
}

const loopbackOf = (r: Pick<Router, 'loopback_ipv4' | 'loopback_ipv6'>, f: Family) => (f === 'v4' ? r.loopback_ipv4 : r.loopback_ipv6);

/** Every prefix whose presence the view reports: the routers' loopbacks and the hosts' addresses. */
export function hostPrefixes(state: DesiredState): string[] {
  const topology = state.bird.internal_topology;
  const addresses = [...topology.routers.flatMap((r) => FAMILIES.map((f) => loopbackOf(r, f))), ...topology.hosts.flatMap((h) => h.addresses)];
  return [...new Set(addresses.flatMap((a) => (a === null ? [] : [networkOf(a)])).filter((p): p is string => p !== null))].sort();
}

export function internalTopologyView(input: TopologyInputs) {
  const { state, table } = input;
  const topology = state.bird.internal_topology;
  const routesOf = (protocol: string): number | null => (table ? (table.routes_by_protocol.get(protocol) ?? 0) : null);
  const inRib = (address: string): boolean | null => {
    const prefix = networkOf(address);
    return table && prefix ? table.present.has(prefix) : null;
  };
  const sum = (values: (number | null)[]) => (table ? values.reduce<number>((a, b) => a + (b ?? 0), 0) : null);

  const routers = topology.routers.map((router) => {
    // One protocol per family where both ends have a loopback of it, as the agent renders them.
    const sessions = FAMILIES.flatMap((family) => {
      const local = loopbackOf(state.node, family);
      const neighbor = loopbackOf(router, family);
      if (local === null || neighbor === null) return [];
      const protocol = shownProtocolName(ibgpProtocolName(router, family));
      return [{ protocol, family, neighbor, rib_routes: routesOf(protocol), in_rib: inRib(neighbor) }];
    });
    const loopbacks = FAMILIES.map((f) => loopbackOf(router, f)).filter((a): a is string => a !== null);
    const seen = loopbacks.map(inRib);
    return {
      node_id: router.node_id,
      asn: router.asn,
      router_id: router.router_id,
      loopback_ipv4: router.loopback_ipv4,
      loopback_ipv6: router.loopback_ipv6,
      sources: sourcesOf(router.node_id, input),
      sessions,
      rib_routes: sum(sessions.map((s) => s.rib_routes)),
      in_rib: !table || loopbacks.length === 0 ? null : seen.some((s) => s === true),
    };
  });
  const published = new Set(topology.routers.map((r) => r.node_id));

  return {
    node_id: input.node_id,
    generation: input.generation,
    captured_at: table?.captured_at ?? null,
    routers,
    // Named in the template but not in the published state: unknown, decommissioned, or the node itself.
    unresolved_routers: [...new Set(input.template_routers)].filter((id) => !published.has(id)).sort(),
    adjacencies: topology.adjacencies.map((a) => ({ interface: a.interface, node_id: a.node_id, cost: a.cost })),
    ospf:
      topology.adjacencies.length === 0
        ? []
        : FAMILIES.map((family) => ({ protocol: PROTOCOL.ospf(family), family, rib_routes: routesOf(PROTOCOL.ospf(family)) })),
    hosts: topology.hosts.map((h) => ({
      name: h.name,
      interface: h.interface,
      addresses: h.addresses.map((address) => ({ address, prefix: networkOf(address), in_rib: inRib(address) })),
    })),
  };
}

function sourcesOf(nodeId: string, input: TopologyInputs): RouterSource[] {
  const sources: RouterSource[] = [];
  if (input.template_routers.includes(nodeId)) sources.push('template');
  if (input.peering_remotes.includes(nodeId)) sources.push('peering');
  if (input.inbound.includes(nodeId)) sources.push('inbound');
  return sources;
}
