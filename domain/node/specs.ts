import { Type, type Static } from '@sinclair/typebox';

/**
 * The shapes of node configuration as the administration API accepts them and the
 * node stream records them. One source: HTTP validates bodies with these schemas,
 * the events carry values of these types, and `materialise()` reads them.
 */

const Str = (max = 255) => Type.String({ maxLength: max });
const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Boolean>>(t: T, description?: string) =>
  Type.Union([t, Type.Null()], description ? { description } : {});

export const NodeFieldsSchema = Type.Object(
  {
    asn: Type.Integer({ minimum: 1, maximum: 4294967295 }),
    router_id: Type.String({ minLength: 1, maxLength: 64 }),
    site: Type.Optional(Nullable(Str(64))),
    loopback_ipv4: Type.Optional(Nullable(Str(64))),
    loopback_ipv6: Type.Optional(Nullable(Str(64))),
    link_local: Type.Optional(Nullable(Str(64))),
    ipv4_prefixes: Type.Optional(Type.Array(Str(64), { maxItems: 256 })),
    ipv6_prefixes: Type.Optional(Type.Array(Str(64), { maxItems: 256 })),
    inventory: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    labels: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    base_template: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
export type NodeFields = Static<typeof NodeFieldsSchema>;

export const NodeInSchema = Type.Composite(
  [Type.Object({ node_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }) }), NodeFieldsSchema],
  {
    additionalProperties: false,
  },
);
export type NodeIn = Static<typeof NodeInSchema>;

export const NodePatchSchema = Type.Partial(NodeFieldsSchema, { additionalProperties: false });
export type NodePatch = Static<typeof NodePatchSchema>;

export const PeeringInSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    remote_asn: Type.Integer({ minimum: 1, maximum: 4294967295 }),
    remote_node_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    remote_label: Type.Optional(Nullable(Str(255))),
    is_internal: Type.Optional(Type.Boolean({ default: false })),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    notes: Type.Optional(Nullable(Str(4096))),
  },
  { additionalProperties: false },
);
export type PeeringIn = Static<typeof PeeringInSchema>;

export const PeeringPatchSchema = Type.Partial(PeeringInSchema, { additionalProperties: false });
export type PeeringPatch = Static<typeof PeeringPatchSchema>;

/** A Linux interface name: at most 15 characters, no slash, no whitespace. */
const IfName = Type.String({ minLength: 1, maxLength: 15, pattern: '^[A-Za-z0-9_.-]+$' });

export const WireguardPeerSchema = Type.Object(
  {
    public_key: Type.Optional(Nullable(Type.String({ pattern: '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw480]=$' }), "the peer's WireGuard public key (base64)")),
    endpoint: Type.Optional(Nullable(Str(255), 'host:port the tunnel is sent to; null: the peer connects')),
    allowed_ips: Type.Optional(Type.Array(Str(64), { maxItems: 64, description: 'prefixes routed into the tunnel' })),
    persistent_keepalive_seconds: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 65535 }), 'keepalive interval; null or 0: none')),
    preshared_key_ref: Type.Optional(Nullable(Str(255), 'name of a preshared key kept on the node (never the key itself)')),
  },
  { additionalProperties: false },
);

/** A WireGuard interface specification. Fields beyond the contract's four are ours. */
export const InterfaceSpecSchema = Type.Object(
  {
    name: { ...IfName, description: 'Linux interface name (at most 15 characters)' },
    kind: Type.Optional(Type.Literal('wireguard', { default: 'wireguard', description: 'interface kind: `wireguard`' })),
    listen_port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }), 'WireGuard listen port')),
    addresses: Type.Optional(Type.Array(Str(64), { maxItems: 16, description: 'addresses of the interface (CIDR)' })),
    mtu: Type.Optional(Type.Integer({ minimum: 1280, maximum: 9000, description: 'MTU' })),
    /** Remote link-local address for the `peer` route of an eBGP link (fe80::/10). */
    peer_link_local: Type.Optional(Nullable(Str(64), 'remote link-local address (fe80::/10) for the peer route of an eBGP link')),
    /** Internal links: OSPF cost of this adjacency. */
    cost: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }), 'internal links: OSPF cost of this adjacency')),
    peer: Type.Optional({ ...WireguardPeerSchema, description: 'the WireGuard peer' }),
  },
  { additionalProperties: false },
);
export type InterfaceSpec = Static<typeof InterfaceSpecSchema>;

/** A BGP session specification. Fields beyond the contract's five are ours. */
export const SessionSpecSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$', description: 'BIRD protocol name' }),
    remote_asn: Type.Integer({ minimum: 1, maximum: 4294967295, description: 'AS number of the neighbor' }),
    neighbor_address: { ...Str(64), description: 'address of the neighbor' },
    /** Interface the neighbor is reached over; required for a link-local neighbor. */
    interface: Type.Optional(Nullable(IfName, 'interface the neighbor is reached over; required for a link-local neighbor')),
    source_address: Type.Optional(Nullable(Str(64), 'local address of the session, or null')),
    address_family: Type.Optional(Type.Union([Type.Literal('ipv4'), Type.Literal('ipv6'), Type.Literal('mp-bgp')], { description: 'channels of the session' })),
    policy: Type.Optional(Type.Union([Type.Literal('peer'), Type.Literal('route_collector')], { description: 'import and export policy' })),
    extended_next_hop: Type.Optional(Type.Boolean({ description: 'IPv4 routes over an IPv6 session (RFC 8950)' })),
    enabled: Type.Optional(Type.Boolean({ default: true, description: 'false leaves the session out' })),
    link_latency: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 9 }), 'dn42 latency community (1 to 9), or null')),
    bandwidth: Type.Optional(Nullable(Type.Integer({ minimum: 21, maximum: 29 }), 'dn42 bandwidth community (21 to 29), or null')),
    crypto: Type.Optional(Nullable(Type.Integer({ minimum: 31, maximum: 34 }), 'dn42 encryption community (31 to 34), or null')),
    import_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1 }), 'most routes accepted from the neighbor, or null')),
    import_limit_action: Type.Optional(
      Type.Union([Type.Literal('block'), Type.Literal('restart'), Type.Literal('disable'), Type.Literal('warn')], {
        description: 'what BIRD does past the import limit',
      }),
    ),
    local_pref: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 4294967295 }), 'local preference of its routes, or null')),
    bfd: Type.Optional(Type.Boolean({ description: 'BFD on the session' })),
  },
  { additionalProperties: false },
);
export type SessionSpec = Static<typeof SessionSpecSchema>;

/** Where a node sits and how it is addressed, with absent optional fields as null. */
export interface NodeAddressing {
  asn: number;
  router_id: string;
  site: string | null;
  loopback_ipv4: string | null;
  loopback_ipv6: string | null;
  link_local: string | null;
}

export function addressingOf(fields: NodeFields): NodeAddressing {
  return {
    asn: fields.asn,
    router_id: fields.router_id,
    site: fields.site ?? null,
    loopback_ipv4: fields.loopback_ipv4 ?? null,
    loopback_ipv6: fields.loopback_ipv6 ?? null,
    link_local: fields.link_local ?? null,
  };
}
