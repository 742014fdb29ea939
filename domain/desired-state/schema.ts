import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FieldError } from '../errors.js';
import { isIpv6LinkLocal, parseIp } from '../net/ip.js';
import { addressAjv, Fmt, IfName, toFieldErrors } from '../net/schema.js';
import { DEFAULT_RPKI_MODE, HostSchema, RPKI_MODES } from '../node/base-template.js';
import { DnsStateSchema } from '../dns/state-schema.js';

// The parts below the document that other modules own, for the agent and the
// server that read the document as one contract.
export { toFieldErrors } from '../net/schema.js';
export { DEFAULT_RPKI_MODE, HostSchema, RPKI_MODES, type RpkiMode } from '../node/base-template.js';
export {
  DNS_RECORD_TYPES,
  DnsForwardStateSchema,
  DnsRecordStateSchema,
  DnsStateSchema,
  DnsZoneStateSchema,
  type DnsForwardState,
  type DnsRecordState,
  type DnsState,
  type DnsZoneState,
} from '../dns/state-schema.js';

/**
 * The desired state of one node: everything its agent needs to render WireGuard
 * and BIRD 2, and nothing it would have to look up elsewhere. One schema, shared
 * by the control server (which refuses to publish a document that fails it) and
 * the node agent (which refuses to apply one). Address formats are the ones in
 * `ADDRESS_FORMATS`; `addressAjv()` (domain/net/schema.ts) registers them.
 *
 * The document holds no generation number and no time: it is a pure function of
 * the configuration, so a rollback re-publishes the same bytes and a diff between
 * generations shows only configuration changes.
 *
 * Required are the contract's minimum (`node` with `node_id`, `asn`,
 * `router_id`; `interfaces[]`; `bgp_sessions[]`; `bird.internal_topology` with
 * `routers[]` and `hosts[]`) and, inside list items, what has no sensible
 * default. Every other field has a `default`: `validateDesiredState` fills them
 * in place (ajv `useDefaults`), so a document that passes is complete and the
 * type `DesiredState` holds. `materialise()` always writes every field.
 */

/** The error a publishing write answers (422) when its document fails this schema. */
export const MATERIALIZATION_FAILED = 'materialization failed schema validation';

export const DESIRED_STATE_SCHEMA_VERSION = 1;

/** Defaults of the desired state, in one place. */
export const DEFAULT_MTU = 1420;
export const DEFAULT_OSPF_COST = 100;
export const DEFAULT_IMPORT_LIMIT = 8500;
/** A point-to-point tunnel with one peer: routing is BIRD's, so WireGuard accepts everything. */
export const DEFAULT_ALLOWED_IPS: readonly string[] = ['0.0.0.0/0', '::/0'];
/** Prefixes dn42 peers may announce (dn42 registry filter.txt / filter6.txt), in BIRD prefix-pattern syntax. */
export const DN42_IMPORT_PREFIXES: { readonly ipv4: readonly string[]; readonly ipv6: readonly string[] } = {
  ipv4: [
    '172.20.0.0/14{21,29}',
    '172.20.0.0/24{28,32}',
    '172.21.0.0/24{28,32}',
    '172.22.0.0/24{28,32}',
    '172.23.0.0/24{28,32}',
    '172.31.0.0/16+',
    '10.100.0.0/14+',
    '10.127.0.0/16+',
    '10.0.0.0/8{15,24}',
  ],
  ipv6: ['fd00::/8{44,64}'],
};

/** Nullable, null when absent. */
const OrNull = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()], { default: null });
/** The field is filled with `value` when absent. */
const Def = <T extends TSchema>(t: T, value: unknown): T => ({ ...t, default: value });

const Asn = Type.Integer({ minimum: 1, maximum: 4294967295 });
const NodeId = Type.String({ minLength: 1, maxLength: 64 });
const WireguardKey = Type.String({ pattern: '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw480]=$' });
/** A BIRD prefix pattern: `prefix`, `prefix+`, `prefix-` or `prefix{min,max}`. */
const BirdPrefixPattern = Type.String({ pattern: '^[0-9A-Fa-f.:]+/\\d{1,3}(\\+|-|\\{\\d{1,3},\\d{1,3}\\})?$' });

export const NodeIdentitySchema = Type.Object(
  {
    node_id: NodeId,
    asn: Asn,
    router_id: Type.String({ minLength: 1, maxLength: 64 }),
    site: OrNull(Type.String({ maxLength: 64 })),
    /** dn42 region community (64511, 41..57); drives the region community and cold-potato MED. */
    region: OrNull(Type.Integer({ minimum: 41, maximum: 57 })),
    loopback_ipv4: OrNull(Fmt('ipv4-address')),
    loopback_ipv6: OrNull(Fmt('ipv6-address')),
    /** The node's eBGP link-local address (fe80::/10, no zone). */
    link_local: OrNull(Fmt('ipv6-link-local')),
    ipv4_prefixes: Def(Type.Array(Fmt('ipv4-prefix')), []),
    ipv6_prefixes: Def(Type.Array(Fmt('ipv6-prefix')), []),
  },
  { additionalProperties: false },
);

/** `ip addr add <address> [peer <peer>] dev <interface>`. */
export const InterfaceAddressSchema = Type.Object(
  {
    address: Fmt('ip-interface'),
    /** Point-to-point peer (`fe80::y/128` on a link-local eBGP link), else null. */
    peer: OrNull(Fmt('ip-interface')),
  },
  { additionalProperties: false },
);

export const WireguardPeerSchema = Type.Object(
  {
    /** Null when there is no peer yet (an internal peer whose agent has not reported its key, or none configured). */
    public_key: OrNull(WireguardKey),
    preshared_key_ref: OrNull(Type.String({ minLength: 1, maxLength: 255 })),
    /** `host:port` or `[v6]:port`; null when the peer dials in. */
    endpoint: OrNull(Type.String({ minLength: 1, maxLength: 255 })),
    allowed_ips: Def(Type.Array(Fmt('ip-interface'), { maxItems: 64 }), DEFAULT_ALLOWED_IPS),
    persistent_keepalive_seconds: OrNull(Type.Integer({ minimum: 0, maximum: 65535 })),
  },
  { additionalProperties: false },
);

export const InterfaceStateSchema = Type.Object(
  {
    name: IfName,
    kind: Def(Type.Literal('wireguard'), 'wireguard'),
    /** `internal` links join the node to its own fleet (OSPF, iBGP underlay); `external` links carry eBGP. */
    scope: Type.Union([Type.Literal('external'), Type.Literal('internal')], { default: 'external' }),
    mtu: Type.Integer({ minimum: 1280, maximum: 9000, default: DEFAULT_MTU }),
    addresses: Def(Type.Array(InterfaceAddressSchema, { maxItems: 16 }), []),
    listen_port: OrNull(Type.Integer({ minimum: 1, maximum: 65535 })),
    /** Which private key the agent uses: a node has one key pair, so always `node`. */
    private_key_ref: Def(Type.Literal('node'), 'node'),
    /** The one WireGuard peer; without a `public_key` the interface comes up without a peer. */
    peer: Def(WireguardPeerSchema, {}),
  },
  { additionalProperties: false },
);

export const BgpSessionStateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' }),
    remote_asn: Asn,
    /** Plain address; a link-local neighbour names its `interface`. */
    neighbor: Fmt('ip-address'),
    interface: OrNull(IfName),
    source_address: OrNull(Fmt('ip-address')),
    /** `mp-bgp`: one protocol with both channels; `ipv4`/`ipv6`: one channel. */
    address_family: Type.Union([Type.Literal('ipv4'), Type.Literal('ipv6'), Type.Literal('mp-bgp')]),
    /** RFC 8950 IPv4 routes over an IPv6 session. */
    extended_next_hop: Type.Boolean({ default: false }),
    policy: Type.Union([Type.Literal('peer'), Type.Literal('route_collector')], { default: 'peer' }),
    /** dn42 communities (64511, N): latency 1..9, bandwidth 21..29, crypto 31..34. */
    link_latency: OrNull(Type.Integer({ minimum: 1, maximum: 9 })),
    bandwidth: OrNull(Type.Integer({ minimum: 21, maximum: 29 })),
    crypto: OrNull(Type.Integer({ minimum: 31, maximum: 34 })),
    import_limit: Type.Integer({ minimum: 1, default: DEFAULT_IMPORT_LIMIT }),
    import_limit_action: Type.Union([Type.Literal('block'), Type.Literal('restart'), Type.Literal('disable'), Type.Literal('warn')], { default: 'block' }),
    local_pref: OrNull(Type.Integer({ minimum: 0, maximum: 4294967295 })),
    bfd: Type.Boolean({ default: false }),
  },
  { additionalProperties: false },
);

/** An iBGP neighbour: another node of the fleet, peered on loopbacks. */
export const RouterSchema = Type.Object(
  {
    node_id: NodeId,
    asn: Asn,
    router_id: Type.String({ minLength: 1, maxLength: 64 }),
    loopback_ipv4: OrNull(Fmt('ipv4-address')),
    loopback_ipv6: OrNull(Fmt('ipv6-address')),
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
        adjacencies: Def(Type.Array(AdjacencySchema), []),
      },
      { additionalProperties: false },
    ),
    /** MED added to routes learnt in another region; null turns cold-potato routing off. */
    cold_potato_med: OrNull(Type.Integer({ minimum: 0, maximum: 4294967295 })),
    /** First match wins: routes inside `prefix` get `local_pref`. */
    route_local_pref: Def(
      Type.Array(Type.Object({ prefix: Fmt('ip-prefix'), local_pref: Type.Integer({ minimum: 0, maximum: 4294967295 }) }, { additionalProperties: false })),
      [],
    ),
    /** Exact-match rejects on eBGP import (flap mitigations); canonical, sorted. */
    blocked_prefixes: Def(Type.Array(Fmt('ip-prefix')), []),
    /**
     * RPKI policy of the node. Absent from the documents of agents that predate
     * it (they refuse unknown fields, `takesRpki`); an agent that knows the
     * field and gets a document without it applies the default.
     */
    rpki: Def(
      Type.Object(
        {
          mode: Type.Union(
            RPKI_MODES.map((m) => Type.Literal(m)),
            { default: DEFAULT_RPKI_MODE },
          ),
        },
        { additionalProperties: false },
      ),
      { mode: DEFAULT_RPKI_MODE },
    ),
    /** Prefixes accepted from eBGP peers, in BIRD prefix-pattern syntax. */
    import_prefixes: Def(
      Type.Object({ ipv4: Type.Array(BirdPrefixPattern), ipv6: Type.Array(BirdPrefixPattern) }, { additionalProperties: false }),
      DN42_IMPORT_PREFIXES,
    ),
  },
  { additionalProperties: false },
);

export const DesiredStateSchema = Type.Object(
  {
    schema_version: Def(Type.Literal(DESIRED_STATE_SCHEMA_VERSION), DESIRED_STATE_SCHEMA_VERSION),
    node: NodeIdentitySchema,
    interfaces: Type.Array(InterfaceStateSchema),
    bgp_sessions: Type.Array(BgpSessionStateSchema),
    bird: BirdStateSchema,
    /** The node's DNS service; null while the node belongs to no enabled DNS group. */
    dns: OrNull(DnsStateSchema),
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

const ajv = addressAjv();
const check = ajv.compile<DesiredState>(DesiredStateSchema);

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

const checkDnsSection = ajv.compile<DesiredState['dns']>(Type.Union([DnsStateSchema, Type.Null()]));

/**
 * `validateDesiredState` of the `dns` section alone, for a document whose other
 * sections passed it as they are: no rule (schema or cross check) relates `dns`
 * to them, so the document passes exactly when this does. Fills the section's
 * defaults in place like the whole check. Only a verdict: a failing document is
 * checked whole for its located errors.
 */
export function validDnsSection(dns: unknown): boolean {
  return checkDnsSection(dns);
}

/** Checks a document and fills its absent defaulted fields in place; errors are located under `['state', ...]`. */
export function validateDesiredState(doc: unknown): { ok: true } | { ok: false; errors: FieldError[] } {
  if (!check(doc)) return { ok: false, errors: toFieldErrors(['state'], check.errors) };
  const errors = crossChecks(doc);
  return errors.length === 0 ? { ok: true } : { ok: false, errors };
}
