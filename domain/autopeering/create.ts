import { Type, type Static } from '@sinclair/typebox';
import { effectivePortRange } from '../node/port-policy.js';
import { formatIp, isIpv6LinkLocal, parseIp, parsePrefix, type Ip } from '../net/ip.js';
import { Conflict, NotFound, Validation, type FieldError } from '../errors.js';
import type { InterfaceSpec, PeeringIn, SessionSpec } from '../node/specs.js';
import type { LiveNode } from '../node/state.js';
import type { AutopeeringPolicy } from './policy.js';
import type { ProvisionedPeering, RequestedPeering, SessionForm } from './request.js';

/**
 * The portal's `POST /autopeering/requests` (document 3, RequestCreateIn and the
 * three session forms), as pure rules: the body's shape, what each form needs,
 * the reviewer's checks that need no I/O, the registry coverage of the peer's
 * tunnel addresses, and the plan of what one request creates on a node (names,
 * port, interface and sessions) decided against the node's state.
 */

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const RequestCreateInSchema = Type.Object(
  {
    node_id: Type.String({ minLength: 1, maxLength: 64, description: 'target node' }),
    public_key: Type.String({ pattern: '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw480]=$', description: "the peer's WireGuard public key (base64)" }),
    endpoint: Type.Optional(Nullable(Type.String({ maxLength: 261, description: '`host:port` the node dials; omit when the peer has no dial-in' }))),
    link_local: Type.Optional(
      Nullable(Type.String({ maxLength: 64, description: "peer's link-local address (fe80::/10); default fe80::<last four digits of the ASN>" })),
    ),
    mtu: Type.Optional(Type.Integer({ minimum: 1280, maximum: 1420, default: 1420 })),
    mp_bgp: Type.Optional(Type.Boolean({ default: true })),
    session_addressing: Type.Optional(Type.Union([Type.Literal('link-local'), Type.Literal('ipv6-ula')], { default: 'link-local' })),
    peer_ipv4: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    peer_ipv6: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
    extended_next_hop: Type.Optional(Type.Boolean({ description: 'always true for the multiprotocol forms; false there is a 422' })),
    notes: Type.Optional(Nullable(Type.String({ maxLength: 512 }))),
  },
  { additionalProperties: false },
);
export type RequestCreateIn = Static<typeof RequestCreateInSchema>;

/** `fe80::<last four decimal digits of the ASN>` (AS4242421234: `fe80::1234`), the dn42 habit the contract names. */
export function defaultLinkLocal(asn: number): string {
  return formatIp(parseIp(`fe80::${String(asn).slice(-4)}`)!);
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** `host:port` with a DNS name, a dotted IPv4 or a bracketed IPv6 and a port 1 to 65535. */
export function isHostPort(text: string): boolean {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(text);
  if (!m) return false;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return false;
  if (m[1] !== undefined) return parseIp(m[1])?.kind() === 'ipv6';
  return parseIp(m[2])?.kind() === 'ipv4' || (HOSTNAME.test(m[2]) && !/^[\d.]+$/.test(m[2]));
}

const ULA: [Ip, number] = parsePrefix('fd00::/8')!;

const invalid = (field: string, msg: string, type: string, message = `invalid ${field}: ${msg}`) =>
  new Validation(message, [{ loc: ['body', field], msg, type }]);

/** A request body with the contract's defaults applied and its form decided. */
export interface ValidatedRequest {
  node_id: string;
  form: SessionForm;
  requested: RequestedPeering;
}

/**
 * The rules of RequestCreateIn that need nothing but the body and the ASN
 * (422 each, saying what to change): the form's addresses, `extended_next_hop`,
 * `host:port`, link-local and ULA ranges.
 */
export function validateCreate(input: RequestCreateIn, asn: number): ValidatedRequest {
  const mp = input.mp_bgp ?? true;
  const addressing = input.session_addressing ?? 'link-local';
  const form: SessionForm = !mp ? 'dual-plain' : addressing === 'ipv6-ula' ? 'ula-mp' : 'link-local-mp';
  const peer4 = input.peer_ipv4 ?? null;
  const peer6 = input.peer_ipv6 ?? null;

  if (mp && input.extended_next_hop === false) {
    throw invalid(
      'extended_next_hop',
      'a multiprotocol session carries IPv4 routes with IPv6 next hops (RFC 8950), so extended next hop is always on; omit the field, or set mp_bgp false for two plain sessions',
      'extended_next_hop',
      'extended_next_hop cannot be false for a multiprotocol session: IPv4 routes travel with IPv6 next hops (RFC 8950); omit it, or set mp_bgp false and give peer_ipv4 and peer_ipv6 for two plain sessions',
    );
  }
  if (form === 'link-local-mp') {
    const given = [peer4 !== null && 'peer_ipv4', peer6 !== null && 'peer_ipv6'].filter((f): f is string => !!f);
    if (given.length > 0) {
      throw new Validation(
        `${given.join(' and ')} not accepted for a link-local multiprotocol session; leave ${given.length > 1 ? 'them' : 'it'} out, or set session_addressing ipv6-ula (peer_ipv6) or mp_bgp false (both)`,
        given.map((f) => ({ loc: ['body', f], msg: 'not accepted for the link-local multiprotocol form', type: 'form' })),
      );
    }
  }
  if (form === 'ula-mp') {
    if (peer6 === null)
      throw invalid('peer_ipv6', 'required for session_addressing ipv6-ula', 'required', 'peer_ipv6 is required for session_addressing ipv6-ula');
    if (peer4 !== null) {
      throw invalid(
        'peer_ipv4',
        'not accepted for the ULA multiprotocol form',
        'form',
        'peer_ipv4 not accepted for an ipv6-ula multiprotocol session; leave it out, or set mp_bgp false for two plain sessions',
      );
    }
  }
  if (form === 'dual-plain') {
    const missing = [peer4 === null && 'peer_ipv4', peer6 === null && 'peer_ipv6'].filter((f): f is string => !!f);
    if (missing.length > 0) {
      throw new Validation(
        `${missing.join(' and ')} required when mp_bgp is false (two plain sessions need both peer tunnel addresses)`,
        missing.map((f) => ({ loc: ['body', f], msg: 'required when mp_bgp is false', type: 'required' })),
      );
    }
  }

  let ipv4: string | null = null;
  if (peer4 !== null) {
    const ip = parseIp(peer4);
    if (ip?.kind() !== 'ipv4') throw invalid('peer_ipv4', `not an IPv4 address: ${peer4}`, 'ipv4');
    ipv4 = formatIp(ip);
  }
  let ipv6: string | null = null;
  if (peer6 !== null) {
    const ip = parseIp(peer6);
    if (ip?.kind() !== 'ipv6') throw invalid('peer_ipv6', `not an IPv6 address: ${peer6}`, 'ipv6');
    if (!ip.match(ULA)) {
      throw invalid(
        'peer_ipv6',
        `${formatIp(ip)} is outside fd00::/8`,
        'ula',
        `peer_ipv6 ${formatIp(ip)} is outside fd00::/8; use an address of your registered route6 prefix`,
      );
    }
    ipv6 = formatIp(ip);
  }

  const linkLocalText = input.link_local ?? defaultLinkLocal(asn);
  const linkLocal = parseIp(linkLocalText);
  if (!isIpv6LinkLocal(linkLocal)) {
    throw invalid(
      'link_local',
      `${linkLocalText} is not an IPv6 link-local address (fe80::/10)`,
      'link_local',
      `link_local ${linkLocalText} is not inside fe80::/10; give an address like fe80::1234 or leave it out`,
    );
  }

  const endpoint = input.endpoint ?? null;
  if (endpoint !== null && !isHostPort(endpoint)) {
    throw invalid(
      'endpoint',
      'expected host:port',
      'host_port',
      `endpoint ${endpoint} is not host:port; write it like peer.example.net:51820, 192.0.2.1:51820 or [2001:db8::1]:51820, or leave it out when you have no dial-in`,
    );
  }

  return {
    node_id: input.node_id,
    form,
    requested: {
      public_key: input.public_key,
      endpoint,
      link_local: formatIp(linkLocal!),
      mtu: input.mtu ?? 1420,
      mp_bgp: mp,
      session_addressing: addressing,
      peer_ipv4: ipv4,
      peer_ipv6: ipv6,
      extended_next_hop: mp ? true : (input.extended_next_hop ?? false),
      notes: input.notes ?? null,
    },
  };
}

/** The `route` and `route6` prefixes the registry holds for an ASN. */
export interface RegisteredRoutes {
  route: readonly string[];
  route6: readonly string[];
}

/** Whether the form has peer tunnel addresses the registry must cover. */
export const needsRegistry = (v: ValidatedRequest): boolean => v.requested.peer_ipv4 !== null || v.requested.peer_ipv6 !== null;

/**
 * Each peer tunnel address must lie inside a `route` (IPv4) or `route6` (IPv6)
 * prefix the ASN holds (422 naming what to register).
 */
export function checkRouteCoverage(asn: number, v: ValidatedRequest, routes: RegisteredRoutes): void {
  const errors: FieldError[] = [];
  const messages: string[] = [];
  for (const [field, address, kind, held] of [
    ['peer_ipv4', v.requested.peer_ipv4, 'route', routes.route],
    ['peer_ipv6', v.requested.peer_ipv6, 'route6', routes.route6],
  ] as const) {
    if (address === null) continue;
    const ip = parseIp(address)!;
    const inside = held.some((text) => {
      const prefix = parsePrefix(text);
      return prefix !== null && prefix[0].kind() === ip.kind() && ip.match(prefix);
    });
    if (inside) continue;
    const suggestion = `${address}/${ip.kind() === 'ipv4' ? 32 : 128}`;
    const holds = held.length > 0 ? `AS${asn} holds ${held.join(', ')}` : `AS${asn} holds no ${kind} object`;
    messages.push(
      `${field} ${address} is not inside a ${kind} prefix of AS${asn}; register a ${kind} object covering it (at least ${suggestion}) with origin AS${asn} (${holds})`,
    );
    errors.push({ loc: ['body', field], msg: `register a ${kind} covering ${suggestion} with origin AS${asn}`, type: 'registry' });
  }
  if (errors.length > 0) throw new Validation(messages.join('; '), errors);
}

/** Names a request's peering, interface and sessions get (decisions: `autopeer_` as the contract's session names). */
export interface PortalNames {
  peering: string;
  interface: string;
  sessions: string[];
}

/**
 * The contract names the two plain sessions `autopeer_<asn>_v4` and `_v6`; the
 * peering and the single session of the multiprotocol forms take the same stem
 * (`autopeer_<asn>`), so every record of a portal request says where it came
 * from. A Linux interface name has at most 15 characters, which `autopeer_`
 * plus a 10-digit ASN exceeds: the interface keeps the fleet's external
 * convention `dn42_<asn>` (domain/fleet-ops/names.ts), exactly 15 characters
 * for a 32-bit ASN.
 */
export function portalNames(asn: number, form: SessionForm): PortalNames {
  const stem = `autopeer_${asn}`;
  return { peering: stem, interface: `dn42_${asn}`, sessions: form === 'dual-plain' ? [`${stem}_v4`, `${stem}_v6`] : [stem] };
}

/** The capacity fields of a node's offer (document 3, NodeOffer). */
export interface Capacity {
  capacity: number;
  used_ports: number;
  free_ports: number;
  remaining: number;
  provisioned: number;
  max_sessions: number | null;
}

/** What the port count reads of a node (the node state, or the read model's rows). */
export interface PortHolder {
  fields: Pick<LiveNode['fields'], 'base_template'>;
  interfaces: readonly { spec: Pick<InterfaceSpec, 'listen_port'> }[];
}

/** Ports of the node's external pool held by any interface of the node, enabled or not (so re-enabling one cannot collide). */
function heldPorts(node: PortHolder): { start: number; end: number; held: Set<number> } {
  // The range reads only the node's fields (its own `runtime.wireguard_port_range`).
  const range = effectivePortRange(node as LiveNode, 'external');
  const held = new Set<number>();
  for (const i of node.interfaces) {
    const port = i.spec.listen_port;
    if (port != null && port >= range.start && port <= range.end) held.add(port);
  }
  return { ...range, held };
}

/**
 * Seats of a node: the external port pool (the node's own
 * `runtime.wireguard_port_range` when set) is the capacity; every port an
 * interface holds is used, manual peerings included; `max_sessions` caps the
 * requests provisioned through the portal; `remaining` is what the portal
 * still accepts (the smaller of the free ports and the cap's room).
 */
export function capacityOf(node: PortHolder, policy: AutopeeringPolicy, provisioned: number): Capacity {
  const { start, end, held } = heldPorts(node);
  const capacity = end - start + 1;
  const free = capacity - held.size;
  const room = policy.max_sessions === null ? free : Math.max(0, policy.max_sessions - provisioned);
  return { capacity, used_ports: held.size, free_ports: free, remaining: Math.max(0, Math.min(free, room)), provisioned, max_sessions: policy.max_sessions };
}

/** The lowest port of the external pool no interface of the node holds. */
export function lowestFreePort(node: PortHolder): number | undefined {
  const { start, end, held } = heldPorts(node);
  for (let port = start; port <= end; port++) if (!held.has(port)) return port;
  return undefined;
}

/** Link-local addresses an interface spec names: its peer link-local and either side of its link-local `addresses`. */
function linkLocalsOf(spec: InterfaceSpec): string[] {
  const texts = [spec.peer_link_local ?? '', ...(spec.addresses ?? []).flatMap((a) => a.split(/\s+peer\s+/))];
  return texts
    .map((t) => parseIp(t.trim().split('/')[0]))
    .filter((ip) => isIpv6LinkLocal(ip))
    .map((ip) => formatIp(ip!));
}

/** What one request creates on the node, and the `provision` block handed back. */
export interface ProvisionPlan {
  peering: PeeringIn;
  interface: { spec: InterfaceSpec; enabled: boolean; sort_order: number };
  sessions: { spec: SessionSpec; sort_order: number }[];
  provision: ProvisionedPeering;
}

/**
 * Decides a request against the node as it is inside the write (its stream
 * locked): open (404), prerequisites (422), one external peering per AS and
 * seats (409), the link-local address (422 or 409), then the lowest free port.
 */
export function planProvision(node: LiveNode | undefined, nodeId: string, asn: number, provisioned: number, v: ValidatedRequest): ProvisionPlan {
  const policy = node?.autopeering;
  if (!node || node.lifecycle !== 'active' || !policy?.enabled) throw new NotFound(`node ${nodeId} is not open for autopeering`);
  const f = node.fields;
  const { requested, form } = v;

  const missing = [
    !f.link_local && 'link_local',
    form !== 'link-local-mp' && !f.loopback_ipv6 && 'loopback_ipv6',
    form === 'dual-plain' && !f.loopback_ipv4 && 'loopback_ipv4',
  ].filter((m): m is string => !!m);
  if (missing.length > 0) {
    throw new Validation(`node ${nodeId} is missing ${missing.join(' and ')}, which this session form needs; choose another node or session form`, [
      { loc: ['body', 'node_id'], msg: `node prerequisites missing: ${missing.join(', ')}`, type: 'node_prerequisites' },
    ]);
  }

  const existing = node.peerings.find((p) => !p.is_internal && p.remote_asn === asn);
  if (existing) throw new Conflict(`node ${nodeId} already has an external peering with AS${asn} ('${existing.name}'); one per node and AS`);

  const seats = capacityOf(node, policy, provisioned);
  if (policy.max_sessions !== null && provisioned >= policy.max_sessions) {
    throw new Conflict(`node ${nodeId} has no autopeering capacity left (max_sessions ${policy.max_sessions} reached); choose another node`);
  }
  const port = lowestFreePort(node);
  if (port === undefined || seats.remaining === 0) {
    throw new Conflict(`node ${nodeId} has no free port left in its external port pool; choose another node`);
  }

  const linkLocal = parseIp(requested.link_local)!;
  const own = f.link_local ? parseIp(f.link_local.split('/')[0]) : null;
  if (own && formatIp(own) === formatIp(linkLocal)) {
    throw new Validation(`link_local ${requested.link_local} is the node's own link-local address; choose another link_local`, [
      { loc: ['body', 'link_local'], msg: "equals the node's link-local address", type: 'link_local' },
    ]);
  }
  const wanted = formatIp(linkLocal);
  const clash = node.interfaces.find((i) => linkLocalsOf(i.spec).includes(wanted));
  if (clash)
    throw new Conflict(`link_local ${requested.link_local} is already used by interface '${clash.spec.name}' on node ${nodeId}; choose another link_local`);

  const names = portalNames(asn, form);
  const addresses = [`${f.link_local}/64`];
  if (requested.peer_ipv4 !== null) addresses.push(`${f.loopback_ipv4}/32 peer ${requested.peer_ipv4}/32`);
  if (requested.peer_ipv6 !== null) addresses.push(`${f.loopback_ipv6}/128 peer ${requested.peer_ipv6}/128`);
  const iface: InterfaceSpec = {
    name: names.interface,
    kind: 'wireguard',
    listen_port: port,
    addresses,
    mtu: requested.mtu,
    peer_link_local: requested.link_local,
    peer: { public_key: requested.public_key, endpoint: requested.endpoint },
  };
  const base = { remote_asn: asn, interface: names.interface, policy: 'peer' as const };
  const sessions: SessionSpec[] =
    form === 'link-local-mp'
      ? [{ ...base, name: names.sessions[0], neighbor_address: requested.link_local, address_family: 'mp-bgp', extended_next_hop: true }]
      : form === 'ula-mp'
        ? [
            {
              ...base,
              name: names.sessions[0],
              neighbor_address: requested.peer_ipv6!,
              source_address: f.loopback_ipv6!,
              address_family: 'mp-bgp',
              extended_next_hop: true,
            },
          ]
        : [
            { ...base, name: names.sessions[0], neighbor_address: requested.peer_ipv4!, source_address: f.loopback_ipv4!, address_family: 'ipv4' },
            { ...base, name: names.sessions[1], neighbor_address: requested.peer_ipv6!, source_address: f.loopback_ipv6!, address_family: 'ipv6' },
          ];

  return {
    peering: { name: names.peering, remote_asn: asn, remote_label: null, is_internal: false, enabled: true, notes: requested.notes },
    interface: { spec: iface, enabled: true, sort_order: 0 },
    sessions: sessions.map((spec, i) => ({ spec, sort_order: i })),
    provision: {
      endpoint: policy.endpoint_host === null ? null : `${policy.endpoint_host.includes(':') ? `[${policy.endpoint_host}]` : policy.endpoint_host}:${port}`,
      listen_port: port,
      node_public_key: node.wireguard?.public_key ?? null,
      node_link_local: f.link_local ?? null,
      node_asn: f.asn,
      mtu: requested.mtu,
      node_ipv4: form === 'dual-plain' ? f.loopback_ipv4! : null,
      node_ipv6: form === 'link-local-mp' ? null : f.loopback_ipv6!,
      interface_name: names.interface,
      session_names: names.sessions,
    },
  };
}
