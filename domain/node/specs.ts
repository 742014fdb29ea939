import { Type, type Static } from '@sinclair/typebox';

/**
 * The shapes of node configuration as the administration API accepts them and the
 * node stream records them. One source: HTTP validates bodies with these schemas,
 * the events carry values of these types, and `materialise()` reads them.
 */

const Str = (max = 255) => Type.String({ maxLength: max });
const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Boolean>>(t: T) =>
  Type.Union([t, Type.Null()]);

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

export const NodeInSchema = Type.Composite([Type.Object({ node_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }) }), NodeFieldsSchema], {
  additionalProperties: false,
});
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
    public_key: Type.Optional(Nullable(Type.String({ pattern: '^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw480]=$' }))),
    endpoint: Type.Optional(Nullable(Str(255))),
    allowed_ips: Type.Optional(Type.Array(Str(64), { maxItems: 64 })),
    persistent_keepalive_seconds: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 65535 }))),
    preshared_key_ref: Type.Optional(Nullable(Str(255))),
  },
  { additionalProperties: false },
);

/** A WireGuard interface specification. Fields beyond the contract's four are ours. */
export const InterfaceSpecSchema = Type.Object(
  {
    name: IfName,
    kind: Type.Optional(Type.Literal('wireguard', { default: 'wireguard' })),
    listen_port: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }))),
    addresses: Type.Optional(Type.Array(Str(64), { maxItems: 16 })),
    mtu: Type.Optional(Type.Integer({ minimum: 1280, maximum: 9000 })),
    /** Remote link-local address for the `peer` route of an eBGP link (fe80::/10). */
    peer_link_local: Type.Optional(Nullable(Str(64))),
    /** Internal links: OSPF cost of this adjacency. */
    cost: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 65535 }))),
    peer: Type.Optional(WireguardPeerSchema),
  },
  { additionalProperties: false },
);
export type InterfaceSpec = Static<typeof InterfaceSpecSchema>;

/** A BGP session specification. Fields beyond the contract's five are ours. */
export const SessionSpecSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' }),
    remote_asn: Type.Integer({ minimum: 1, maximum: 4294967295 }),
    neighbor_address: Str(64),
    /** Interface the neighbor is reached over; required for a link-local neighbor. */
    interface: Type.Optional(Nullable(IfName)),
    source_address: Type.Optional(Nullable(Str(64))),
    address_family: Type.Optional(Type.Union([Type.Literal('ipv4'), Type.Literal('ipv6'), Type.Literal('mp-bgp')])),
    policy: Type.Optional(Type.Union([Type.Literal('peer'), Type.Literal('route_collector')])),
    extended_next_hop: Type.Optional(Type.Boolean()),
    enabled: Type.Optional(Type.Boolean({ default: true })),
    link_latency: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 9 }))),
    bandwidth: Type.Optional(Nullable(Type.Integer({ minimum: 21, maximum: 29 }))),
    crypto: Type.Optional(Nullable(Type.Integer({ minimum: 31, maximum: 34 }))),
    import_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    import_limit_action: Type.Optional(Type.Union([Type.Literal('block'), Type.Literal('restart'), Type.Literal('disable'), Type.Literal('warn')])),
    local_pref: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 4294967295 }))),
    bfd: Type.Optional(Type.Boolean()),
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
