import { Validation } from '../errors.js';
import type { InterfaceRecord, PeeringRecord, SessionRecord } from '../node/events.js';
import type { LiveNode } from '../node/state.js';
import { dn42RegionOf } from '../node/region.js';
import { addressingOf } from '../node/specs.js';
import type { FleetContext } from './context.js';
import { canonicalPrefix, formatIp, isIpv6LinkLocal, parseIp, parseIpWithOptionalLength } from '../net/ip.js';
import {
  DEFAULT_ALLOWED_IPS,
  DEFAULT_IMPORT_LIMIT,
  DEFAULT_MTU,
  DEFAULT_OSPF_COST,
  DEFAULT_RPKI_MODE,
  DESIRED_STATE_SCHEMA_VERSION,
  DN42_IMPORT_PREFIXES,
  MATERIALIZATION_FAILED,
  type Adjacency,
  type BgpSessionState,
  type BirdState,
  type DesiredState,
  type InterfaceAddress,
  type InterfaceState,
  type NodeIdentity,
  type Router,
} from './schema.js';
import { baseTemplateErrors, type BaseTemplate } from '../node/base-template.js';
import { takesBlockedPrefixes, takesRpki } from '../fleet-ops/agent-gate.js';
import { dnsStateOf } from '../dns/desired-state.js';

/**
 * `materialise(node, ctx)`: the desired state of one node, as a pure function of
 * its stream and the facts of the nodes it refers to. Same input, same bytes: no
 * clock, no randomness, every list in a stated order, every object built with a
 * fixed key order.
 *
 * The result is not validated here. Values the operator wrote (addresses, keys)
 * are carried over as written, so a bad one makes `validateDesiredState` fail
 * with its location; the publishing command refuses such a document (422
 * `MATERIALIZATION_FAILED`). A base template of the wrong shape cannot be
 * carried over at all and throws `Validation(MATERIALIZATION_FAILED)` here.
 */

/** The node's template, checked; a template of the wrong shape cannot be materialised (422). */
function readBaseTemplate(template: unknown): BaseTemplate {
  const errors = baseTemplateErrors(template);
  if (errors.length > 0) throw new Validation(MATERIALIZATION_FAILED, errors);
  return (template ?? {}) as BaseTemplate;
}

const byOrderThenId = <T extends { sort_order: number; id: number }>(a: T, b: T) => a.sort_order - b.sort_order || a.id - b.id;
const compareStrings = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function identity(node: LiveNode): NodeIdentity {
  const f = node.fields;
  const { asn, router_id, site, loopback_ipv4, loopback_ipv6, link_local } = addressingOf(f);
  return {
    node_id: node.node_id,
    asn,
    router_id,
    site,
    region: dn42RegionOf(f.labels),
    loopback_ipv4,
    loopback_ipv6,
    link_local,
    ipv4_prefixes: [...(f.ipv4_prefixes ?? [])],
    ipv6_prefixes: [...(f.ipv6_prefixes ?? [])],
  };
}

const dn42ImportPrefixes = () => ({ ipv4: [...DN42_IMPORT_PREFIXES.ipv4], ipv6: [...DN42_IMPORT_PREFIXES.ipv6] });

/**
 * What a decommissioned node runs: its identity and nothing else. `bird.rpki`
 * is left out (no session imports anything): every agent takes the document,
 * one that knows the field fills in its default.
 */
export function emptyDesiredState(node: LiveNode): DesiredState {
  const bird: Omit<BirdState, 'rpki'> = {
    internal_topology: { routers: [], hosts: [], adjacencies: [] },
    cold_potato_med: null,
    route_local_pref: [],
    blocked_prefixes: [],
    import_prefixes: dn42ImportPrefixes(),
  };
  return { schema_version: DESIRED_STATE_SCHEMA_VERSION, node: identity(node), interfaces: [], bgp_sessions: [], bird: bird as BirdState, dns: null };
}

/**
 * Node ids whose facts `materialise` reads from `ctx.nodes`: remotes of enabled
 * internal peerings and the template's routers. The command layer loads these,
 * plus the nodes of inbound internal peerings (which it finds itself).
 */
export function referencedNodeIds(node: LiveNode): string[] {
  const ids = new Set<string>();
  for (const p of node.peerings) if (p.enabled && p.is_internal && p.remote_node_id) ids.add(p.remote_node_id);
  const routers = (node.fields.base_template as { bird?: { internal_topology?: { routers?: unknown } } } | undefined)?.bird?.internal_topology?.routers;
  if (Array.isArray(routers)) for (const r of routers) if (typeof r === 'string') ids.add(r);
  ids.delete(node.node_id);
  return [...ids].sort(compareStrings);
}

export function materialise(node: LiveNode, ctx: FleetContext): DesiredState {
  if (node.lifecycle === 'decommissioned') return emptyDesiredState(node);
  const template = readBaseTemplate(node.fields.base_template);
  const peerings = new Map(node.peerings.map((p) => [p.id, p]));
  const peeringOf = (id: number | null) => (id === null ? undefined : peerings.get(id));
  const live = (peeringId: number | null) => peeringOf(peeringId)?.enabled !== false;

  const interfaceRecords = node.interfaces.filter((i) => i.enabled && live(i.peering_id)).sort(byOrderThenId);
  const interfaces = interfaceRecords.map((i, index) => interfaceState(node, i, peeringOf(i.peering_id), ctx, index));
  const sessions = node.sessions
    .filter((s) => s.spec.enabled !== false && live(s.peering_id))
    .sort(byOrderThenId)
    .map((s, index) => sessionState(s, template, interfaceRecords, index));

  const bird: BirdState = {
    internal_topology: {
      routers: routers(node, template, ctx),
      hosts: (template.bird?.internal_topology?.hosts ?? [])
        .map((h) => ({ name: h.name, addresses: [...h.addresses], interface: h.interface }))
        .sort((a, b) => compareStrings(a.name, b.name)),
      adjacencies: interfaceRecords.flatMap((i) => adjacency(i, peeringOf(i.peering_id))),
    },
    cold_potato_med: template.bird?.cold_potato_med ?? null,
    route_local_pref: (template.bird?.route_local_pref ?? []).map((r) => ({ prefix: canonicalPrefix(r.prefix) ?? r.prefix, local_pref: r.local_pref })),
    // Agents before 1.0.187 refuse a document that blocks prefixes; the template keeps them until the agent reports a newer version.
    blocked_prefixes: takesBlockedPrefixes(ctx.agent_version)
      ? [...new Set((template.bird?.blocked_prefixes ?? []).map((p) => canonicalPrefix(p) ?? p))].sort(compareStrings)
      : [],
    rpki: { mode: template.bird?.rpki?.mode ?? DEFAULT_RPKI_MODE },
    import_prefixes: dn42ImportPrefixes(),
  };
  // Agents that predate the RPKI policy refuse a document with the field; theirs leave it out.
  if (!takesRpki(ctx.agent_version)) delete (bird as Partial<BirdState>).rpki;
  return { schema_version: DESIRED_STATE_SCHEMA_VERSION, node: identity(node), interfaces, bgp_sessions: sessions, bird, dns: dnsStateOf(ctx.dns_group) };
}

const isInternal = (p: PeeringRecord | undefined): p is PeeringRecord & { is_internal: true } => p?.is_internal === true;

/** `"a"`, `"a/len"` or `"a/len peer b/len"` as written in an interface spec. */
function parseSpecAddress(text: string): InterfaceAddress {
  const m = /^\s*(\S+)\s+peer\s+(\S+)\s*$/.exec(text);
  return m ? { address: m[1], peer: m[2] } : { address: text.trim(), peer: null };
}

function interfaceState(node: LiveNode, record: InterfaceRecord, peering: PeeringRecord | undefined, ctx: FleetContext, index: number): InterfaceState {
  const spec = record.spec;
  const internal = isInternal(peering);
  const addresses = (spec.addresses ?? []).map(parseSpecAddress);
  // An eBGP link without addresses of its own carries the node's link-local address.
  if (!internal && addresses.length === 0 && node.fields.link_local) addresses.push({ address: `${node.fields.link_local}/64`, peer: null });
  if (spec.peer_link_local) attachPeerLinkLocal(addresses, spec.peer_link_local, index);

  const remote = internal && peering.remote_node_id ? ctx.nodes.get(peering.remote_node_id) : undefined;
  const peerSpec = spec.peer;
  const peer = {
    public_key: peerSpec?.public_key ?? remote?.wireguard_public_key ?? null,
    preshared_key_ref: peerSpec?.preshared_key_ref ?? null,
    endpoint: peerSpec?.endpoint ?? null,
    allowed_ips: [...(peerSpec?.allowed_ips ?? DEFAULT_ALLOWED_IPS)],
    persistent_keepalive_seconds: peerSpec?.persistent_keepalive_seconds ?? null,
  };

  return {
    name: spec.name,
    kind: 'wireguard',
    scope: internal ? 'internal' : 'external',
    mtu: spec.mtu ?? DEFAULT_MTU,
    addresses,
    listen_port: spec.listen_port ?? null,
    private_key_ref: 'node',
    peer,
  };
}

/** `fe80::x/64 peer fe80::y/128`: the peer goes on the link's first link-local address. */
function attachPeerLinkLocal(addresses: InterfaceAddress[], peerLinkLocal: string, index: number): void {
  const local = addresses.find((a) => a.peer === null && isIpv6LinkLocal(parseIpWithOptionalLength(a.address)));
  if (!local) {
    throw new Validation(MATERIALIZATION_FAILED, [
      {
        loc: ['state', 'interfaces', index, 'addresses'],
        msg: 'peer_link_local needs a link-local address on the interface (spec addresses or node link_local)',
        type: 'peer_link_local',
      },
    ]);
  }
  local.peer = peerLinkLocal.includes('/') ? peerLinkLocal : `${peerLinkLocal}/128`;
}

function adjacency(record: InterfaceRecord, peering: PeeringRecord | undefined): Adjacency[] {
  if (!isInternal(peering) || !peering.remote_node_id) return [];
  return [{ interface: record.spec.name, node_id: peering.remote_node_id, cost: record.spec.cost ?? DEFAULT_OSPF_COST }];
}

function sessionState(record: SessionRecord, template: BaseTemplate, interfaces: InterfaceRecord[], index: number): BgpSessionState {
  const spec = record.spec;
  // `fe80::1%wg0` names its interface in the address; the spec may also name it, but not another one.
  const percent = spec.neighbor_address.indexOf('%');
  const address = percent < 0 ? spec.neighbor_address : spec.neighbor_address.slice(0, percent);
  const zone = percent < 0 ? undefined : spec.neighbor_address.slice(percent + 1);
  if (zone !== undefined && spec.interface && zone !== spec.interface) {
    throw new Validation(MATERIALIZATION_FAILED, [
      {
        loc: ['state', 'bgp_sessions', index, 'interface'],
        msg: `neighbor_address names interface '${zone}', interface is '${spec.interface}'`,
        type: 'interface',
      },
    ]);
  }
  const ip = parseIp(address);
  const linkLocal = isIpv6LinkLocal(ip);
  const family = spec.address_family ?? (ip?.kind() === 'ipv4' ? 'ipv4' : linkLocal ? 'mp-bgp' : 'ipv6');
  return {
    name: spec.name,
    remote_asn: spec.remote_asn,
    neighbor: ip ? formatIp(ip) : address,
    interface: spec.interface ?? zone ?? (linkLocal ? onlyInterfaceOf(record.peering_id, interfaces) : null),
    source_address: spec.source_address ?? null,
    address_family: family,
    extended_next_hop: spec.extended_next_hop ?? (family === 'mp-bgp' && ip?.kind() === 'ipv6'),
    policy: spec.policy ?? 'peer',
    link_latency: spec.link_latency ?? null,
    bandwidth: spec.bandwidth ?? null,
    crypto: spec.crypto ?? null,
    import_limit: spec.import_limit ?? template.bird?.import_limit ?? DEFAULT_IMPORT_LIMIT,
    import_limit_action: spec.import_limit_action ?? 'block',
    local_pref: spec.local_pref ?? null,
    bfd: spec.bfd ?? false,
  };
}

/** A link-local session of a peering with exactly one live interface runs over that interface. */
function onlyInterfaceOf(peeringId: number | null, interfaces: InterfaceRecord[]): string | null {
  if (peeringId === null) return null;
  const mine = interfaces.filter((i) => i.peering_id === peeringId);
  return mine.length === 1 ? mine[0].spec.name : null;
}

/**
 * iBGP neighbours: the template's routers, the remotes of this node's enabled
 * internal peerings and the nodes whose enabled internal peerings point here.
 * Self, decommissioned nodes and nodes missing from the context are left out.
 */
function routers(node: LiveNode, template: BaseTemplate, ctx: FleetContext): Router[] {
  const ids = new Set<string>(template.bird?.internal_topology?.routers ?? []);
  for (const p of node.peerings) if (p.enabled && p.is_internal && p.remote_node_id) ids.add(p.remote_node_id);
  for (const p of ctx.inbound) if (p.enabled) ids.add(p.node_id);
  ids.delete(node.node_id);
  const result: Router[] = [];
  for (const id of [...ids].sort(compareStrings)) {
    const facts = ctx.nodes.get(id);
    if (!facts || facts.lifecycle === 'decommissioned') continue;
    result.push({ node_id: id, asn: facts.asn, router_id: facts.router_id, loopback_ipv4: facts.loopback_ipv4, loopback_ipv6: facts.loopback_ipv6 });
  }
  return result;
}
