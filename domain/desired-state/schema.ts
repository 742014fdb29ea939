import { Ajv, type ErrorObject } from 'ajv';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FieldError } from '../errors.js';
import { ADDRESS_FORMATS, isIpv6LinkLocal, parseIp } from './ip.js';

/**
 * The desired state of one node: everything its agent needs to render WireGuard
 * and BIRD 2, and nothing it would have to look up elsewhere. One schema, shared
 * by the control server (which refuses to publish a document that fails it) and
 * the node agent (which refuses to apply one). Address formats are the ones in
 * `ADDRESS_FORMATS`; `desiredStateAjv()` registers them.
 *
 * The document holds no generation number and no time: it is a pure function of
 * the configuration, so a rollback re-publishes the same bytes and a diff between
 * generations shows only configuration changes.
 */

/** The error a publishing write answers (422) when its document fails this schema. */
export const MATERIALIZATION_FAILED = 'materialization failed schema validation';

export const DESIRED_STATE_SCHEMA_VERSION = 1;

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Fmt = (format: keyof typeof ADDRESS_FORMATS) => Type.String({ format, maxLength: 64 });

const Asn = Type.Integer({ minimum: 1, maximum: 4294967295 });
const NodeId = Type.String({ minLength: 1, maxLength: 64 });
/** A Linux interface name: at most 15 characters. */
const IfName = Type.String({ minLength: 1, maxLength: 15, pattern: '^[A-Za-z0-9_.-]+$' });
const WireguardKey = Type.String({ pattern: '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw480]=$' });
/** A BIRD prefix pattern: `prefix`, `prefix+`, `prefix-` or `prefix{min,max}`. */
const BirdPrefixPattern = Type.String({ pattern: '^[0-9A-Fa-f.:]+/\\d{1,3}(\\+|-|\\{\\d{1,3},\\d{1,3}\\})?$' });

export const NodeIdentitySchema = Type.Object(
  {
    node_id: NodeId,
    asn: Asn,
    router_id: Type.String({ minLength: 1, maxLength: 64 }),
    site: Nullable(Type.String({ maxLength: 64 })),
    /** dn42 region community (64511, 41..57); drives the region community and cold-potato MED. */
    region: Nullable(Type.Integer({ minimum: 41, maximum: 57 })),
    loopback_ipv4: Nullable(Fmt('ipv4-address')),
    loopback_ipv6: Nullable(Fmt('ipv6-address')),
    /** The node's eBGP link-local address (fe80::/10, no zone). */
    link_local: Nullable(Fmt('ipv6-link-local')),
    ipv4_prefixes: Type.Array(Fmt('ipv4-prefix')),
    ipv6_prefixes: Type.Array(Fmt('ipv6-prefix')),
  },
  { additionalProperties: false },
);

/** `ip addr add <address> [peer <peer>] dev <interface>`. */
export const InterfaceAddressSchema = Type.Object(
  {
    address: Fmt('ip-interface'),
    /** Point-to-point peer (`fe80::y/128` on a link-local eBGP link), else null. */
    peer: Nullable(Fmt('ip-interface')),
  },
  { additionalProperties: false },
);

export const WireguardPeerSchema = Type.Object(
  {
    /** Null while the remote key is unknown (an internal peer whose agent has not reported it): the interface comes up without a peer. */
    public_key: Nullable(WireguardKey),
    preshared_key_ref: Nullable(Type.String({ minLength: 1, maxLength: 255 })),
    /** `host:port` or `[v6]:port`; null when the peer dials in. */
    endpoint: Nullable(Type.String({ minLength: 1, maxLength: 255 })),
    allowed_ips: Type.Array(Fmt('ip-interface'), { maxItems: 64 }),
    persistent_keepalive_seconds: Nullable(Type.Integer({ minimum: 0, maximum: 65535 })),
  },
  { additionalProperties: false },
);

export const InterfaceStateSchema = Type.Object(
  {
    name: IfName,
    kind: Type.Literal('wireguard'),
    /** `internal` links join the node to its own fleet (OSPF, iBGP underlay); `external` links carry eBGP. */
    scope: Type.Union([Type.Literal('external'), Type.Literal('internal')]),
    mtu: Type.Integer({ minimum: 1280, maximum: 9000 }),
    addresses: Type.Array(InterfaceAddressSchema, { maxItems: 16 }),
    listen_port: Nullable(Type.Integer({ minimum: 1, maximum: 65535 })),
    /** Which private key the agent uses: a node has one key pair, so always `node`. */
    private_key_ref: Type.Literal('node'),
    peer: Nullable(WireguardPeerSchema),
  },
  { additionalProperties: false },
);

export const BgpSessionStateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' }),
    remote_asn: Asn,
    /** Plain address; a link-local neighbour names its `interface`. */
    neighbor: Fmt('ip-address'),
    interface: Nullable(IfName),
    source_address: Nullable(Fmt('ip-address')),
    /** `mp-bgp`: one protocol with both channels; `ipv4`/`ipv6`: one channel. */
    address_family: Type.Union([Type.Literal('ipv4'), Type.Literal('ipv6'), Type.Literal('mp-bgp')]),
    /** RFC 8950 IPv4 routes over an IPv6 session. */
    extended_next_hop: Type.Boolean(),
    policy: Type.Union([Type.Literal('peer'), Type.Literal('route_collector')]),
    /** dn42 communities (64511, N): latency 1..9, bandwidth 21..29, crypto 31..34. */
    link_latency: Nullable(Type.Integer({ minimum: 1, maximum: 9 })),
    bandwidth: Nullable(Type.Integer({ minimum: 21, maximum: 29 })),
    crypto: Nullable(Type.Integer({ minimum: 31, maximum: 34 })),
    import_limit: Type.Integer({ minimum: 1 }),
    import_limit_action: Type.Union([Type.Literal('block'), Type.Literal('restart'), Type.Literal('disable'), Type.Literal('warn')]),
    local_pref: Nullable(Type.Integer({ minimum: 0, maximum: 4294967295 })),
    bfd: Type.Boolean(),
  },
  { additionalProperties: false },
);

/** An iBGP neighbour: another node of the fleet, peered on loopbacks. */
export const RouterSchema = Type.Object(
  {
    node_id: NodeId,
    asn: Asn,
    router_id: Type.String({ minLength: 1, maxLength: 64 }),
    loopback_ipv4: Nullable(Fmt('ipv4-address')),
    loopback_ipv6: Nullable(Fmt('ipv6-address')),
  },
  { additionalProperties: false },
);

/**
 * A machine behind this node that runs no BIRD (a service box, a container
 * bridge): the node installs a static route for each address via `interface`
 * and originates it into the fleet's IGP, so every router reaches it.
 */
export const HostSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }),
    addresses: Type.Array(Fmt('ip-interface'), { minItems: 1, maxItems: 16 }),
    interface: IfName,
  },
  { additionalProperties: false },
);

/** An OSPF (v2 and v3, area 0, point-to-point) adjacency over an internal WireGuard link. */
export const AdjacencySchema = Type.Object(
  {
    interface: IfName,
    node_id: NodeId,
    cost: Type.Integer({ minimum: 1, maximum: 65535 }),
  },
  { additionalProperties: false },
);

export const BirdStateSchema = Type.Object(
  {
    internal_topology: Type.Object(
      {
        routers: Type.Array(RouterSchema),
        hosts: Type.Array(HostSchema),
        adjacencies: Type.Array(AdjacencySchema),
      },
      { additionalProperties: false },
    ),
    /** MED added to routes learnt in another region; null turns cold-potato routing off. */
    cold_potato_med: Nullable(Type.Integer({ minimum: 0, maximum: 4294967295 })),
    /** First match wins: routes inside `prefix` get `local_pref`. */
    route_local_pref: Type.Array(
      Type.Object({ prefix: Fmt('ip-prefix'), local_pref: Type.Integer({ minimum: 0, maximum: 4294967295 }) }, { additionalProperties: false }),
    ),
    /** Exact-match rejects on eBGP import (flap mitigations); canonical, sorted. */
    blocked_prefixes: Type.Array(Fmt('ip-prefix')),
    /** Prefixes accepted from eBGP peers, in BIRD prefix-pattern syntax. */
    import_prefixes: Type.Object({ ipv4: Type.Array(BirdPrefixPattern), ipv6: Type.Array(BirdPrefixPattern) }, { additionalProperties: false }),
  },
  { additionalProperties: false },
);

export const DesiredStateSchema = Type.Object(
  {
    schema_version: Type.Literal(DESIRED_STATE_SCHEMA_VERSION),
    node: NodeIdentitySchema,
    interfaces: Type.Array(InterfaceStateSchema),
    bgp_sessions: Type.Array(BgpSessionStateSchema),
    bird: BirdStateSchema,
    /** The node's DNS service; null while the node belongs to no DNS group. */
    dns: Type.Null(),
  },
  { additionalProperties: false, $id: 'https://dn42-control/schemas/desired-state.json' },
);

export type DesiredState = Static<typeof DesiredStateSchema>;
export type NodeIdentity = Static<typeof NodeIdentitySchema>;
export type InterfaceState = Static<typeof InterfaceStateSchema>;
export type InterfaceAddress = Static<typeof InterfaceAddressSchema>;
export type WireguardPeerState = Static<typeof WireguardPeerSchema>;
export type BgpSessionState = Static<typeof BgpSessionStateSchema>;
export type BirdState = Static<typeof BirdStateSchema>;
export type Router = Static<typeof RouterSchema>;
export type Host = Static<typeof HostSchema>;
export type Adjacency = Static<typeof AdjacencySchema>;

/** An ajv instance that knows the address formats of the desired state. */
export function desiredStateAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: true });
  for (const [name, check] of Object.entries(ADDRESS_FORMATS)) ajv.addFormat(name, check);
  return ajv;
}

const ajv = desiredStateAjv();
const check = ajv.compile<DesiredState>(DesiredStateSchema);

/** ajv errors as field errors: `loc` starts with `root`, then the path into the document. */
export function toFieldErrors(root: (string | number)[], errors: ErrorObject[] | null | undefined): FieldError[] {
  return (errors ?? []).map((e) => {
    const loc = [...root, ...e.instancePath.split('/').filter(Boolean).map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')))];
    if (e.keyword === 'required') loc.push((e.params as { missingProperty: string }).missingProperty);
    if (e.keyword === 'additionalProperties') loc.push((e.params as { additionalProperty: string }).additionalProperty);
    return { loc, msg: e.keyword === 'additionalProperties' ? 'unknown field' : (e.message ?? 'invalid value'), type: e.keyword };
  });
}

/** Rules JSON Schema cannot say: unique names, and an interface for every link-local neighbour. */
function crossChecks(doc: DesiredState): FieldError[] {
  const errors: FieldError[] = [];
  const unique = (list: 'interfaces' | 'bgp_sessions') => {
    const seen = new Set<string>();
    doc[list].forEach((item, i) => {
      if (seen.has(item.name)) errors.push({ loc: ['state', list, i, 'name'], msg: `duplicate name '${item.name}'`, type: 'unique' });
      seen.add(item.name);
    });
  };
  unique('interfaces');
  unique('bgp_sessions');
  doc.bgp_sessions.forEach((s, i) => {
    if (s.interface === null && isIpv6LinkLocal(parseIp(s.neighbor))) {
      errors.push({ loc: ['state', 'bgp_sessions', i, 'interface'], msg: 'a link-local neighbor needs an interface', type: 'required' });
    }
  });
  return errors;
}

export function validateDesiredState(doc: unknown): { ok: true } | { ok: false; errors: FieldError[] } {
  if (!check(doc)) return { ok: false, errors: toFieldErrors(['state'], check.errors) };
  const errors = crossChecks(doc);
  return errors.length === 0 ? { ok: true } : { ok: false, errors };
}
