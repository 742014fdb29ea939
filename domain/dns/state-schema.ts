import { Type, type Static } from '@sinclair/typebox';
import { Fmt } from '../net/schema.js';

/**
 * The DNS part of a node's desired state (`dns` of `domain/desired-state/schema.ts`),
 * which `dnsStateOf` (./desired-state.ts) builds from the node's DNS group.
 */

/** A DNS name in presentation form without the trailing dot; RFC 2317 labels (`0/26`) allowed. */
const DnsName = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^(?=.{1,253}$)([A-Za-z0-9_]([A-Za-z0-9_/-]{0,61}[A-Za-z0-9_])?)(\\.[A-Za-z0-9_]([A-Za-z0-9_/-]{0,61}[A-Za-z0-9_])?)*$',
});
/** Record types a zone may hold. */
export const DNS_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'NS', 'PTR', 'TXT', 'MX', 'SRV', 'CAA', 'DS', 'SSHFP', 'TLSA'] as const;

/** One record; `name` is relative to the zone (`@` for the apex), `content` in zone-file presentation form. */
export const DnsRecordStateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 253, pattern: '^(@|\\*|(\\*\\.)?[A-Za-z0-9_]([A-Za-z0-9_/.-]{0,251}[A-Za-z0-9_])?)$' }),
    type: Type.Union(DNS_RECORD_TYPES.map((t) => Type.Literal(t))),
    content: Type.String({ minLength: 1, maxLength: 4096 }),
    /** Null: the zone's `default_ttl`. Required (no default inside the nullable `dns`). */
    ttl: Type.Union([Type.Integer({ minimum: 0, maximum: 2147483647 }), Type.Null()]),
  },
  { additionalProperties: false },
);

/** An authoritative zone the node serves; only enabled zones and records appear. */
export const DnsZoneStateSchema = Type.Object(
  {
    zone: DnsName,
    /** Fully qualified name of the primary server (SOA MNAME), no trailing dot. */
    primary_ns: DnsName,
    /** SOA RNAME in e-mail form (`hostmaster@example.dn42`). */
    admin_email: Type.String({ minLength: 3, maxLength: 254, pattern: '^[^@\\s]+@[^@\\s]+$' }),
    /** Deterministic: changes whenever the zone's content changes, never goes backwards. */
    soa_serial: Type.Integer({ minimum: 1, maximum: 4294967295 }),
    soa_refresh: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    soa_retry: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    soa_expire: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    soa_minimum: Type.Integer({ minimum: 0, maximum: 2147483647 }),
    default_ttl: Type.Integer({ minimum: 0, maximum: 2147483647 }),
    records: Type.Array(DnsRecordStateSchema),
  },
  { additionalProperties: false },
);

/** Queries for `zone` go to `upstreams` (forward-only). */
export const DnsForwardStateSchema = Type.Object(
  {
    zone: DnsName,
    upstreams: Type.Array(Fmt('ip-address'), { minItems: 1, maxItems: 16 }),
  },
  { additionalProperties: false },
);

/**
 * Inside a nullable union ajv fills no defaults, so every DNS field is required
 * and `materialise()` writes them all.
 *
 * The node's share of its DNS group (an anycast set): a caching resolver with forwards plus authoritative zones. */
export const DnsStateSchema = Type.Object(
  {
    group_id: Type.Integer({ minimum: 1 }),
    group_name: Type.String({ minLength: 1, maxLength: 64 }),
    /** Addresses the server listens on (anycast addresses of the group). */
    bind_addresses: Type.Array(Fmt('ip-address'), { maxItems: 32 }),
    /** Upper bound of the resolver cache's TTL. */
    cache_ttl_seconds: Type.Integer({ minimum: 0, maximum: 604800 }),
    forwards: Type.Array(DnsForwardStateSchema),
    zones: Type.Array(DnsZoneStateSchema),
  },
  { additionalProperties: false },
);

export type DnsState = Static<typeof DnsStateSchema>;
export type DnsZoneState = Static<typeof DnsZoneStateSchema>;
export type DnsRecordState = Static<typeof DnsRecordStateSchema>;
export type DnsForwardState = Static<typeof DnsForwardStateSchema>;
