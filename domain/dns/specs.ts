import { Type, type Static } from '@sinclair/typebox';
import { DNS_RECORD_TYPES } from './state-schema.js';
import type { GroupFields, RecordFields, ZoneFields } from './events.js';

/**
 * The shapes of DNS groups, zones and records as the administration API accepts
 * them (one source: HTTP validates bodies with these schemas; the command layer
 * fills the defaults below). Addresses and names are checked further by
 * `fields.ts` and `records.ts`, which also return their stored form.
 */

/** Defaults, in one place. The contract names only `cache_ttl_seconds` (300). */
export const DNS_DEFAULTS = {
  cache_ttl_seconds: 300,
  soa_refresh: 3600,
  soa_retry: 900,
  soa_expire: 604800,
  soa_minimum: 300,
  default_ttl: 3600,
} as const;

const Ttl = Type.Integer({ minimum: 0, maximum: 2147483647 });
const Positive = Type.Integer({ minimum: 1, maximum: 2147483647 });
const Name = (max = 255) => Type.String({ minLength: 1, maxLength: max });
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);
const SortOrder = Type.Integer({ minimum: -2147483648, maximum: 2147483647 });

export const ForwardSchema = Type.Object({ zone: Name(254), upstreams: Type.Array(Name(64), { minItems: 1, maxItems: 16 }) }, { additionalProperties: false });

export const DnsGroupInSchema = Type.Object(
  {
    name: Name(64),
    bind_addresses: Type.Optional(Type.Array(Name(64), { maxItems: 32 })),
    cache_ttl_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 604800 })),
    forwards: Type.Optional(Type.Array(ForwardSchema, { maxItems: 64 })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type DnsGroupIn = Static<typeof DnsGroupInSchema>;
export const DnsGroupPatchSchema = Type.Partial(DnsGroupInSchema, { additionalProperties: false });
export type DnsGroupPatch = Static<typeof DnsGroupPatchSchema>;

export const DnsZoneInSchema = Type.Object(
  {
    zone: Name(254),
    primary_ns: Type.Optional(Nullable(Name(254))),
    admin_email: Type.Optional(Nullable(Name(254))),
    soa_refresh: Type.Optional(Positive),
    soa_retry: Type.Optional(Positive),
    soa_expire: Type.Optional(Positive),
    soa_minimum: Type.Optional(Ttl),
    default_ttl: Type.Optional(Ttl),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type DnsZoneIn = Static<typeof DnsZoneInSchema>;
export const DnsZonePatchSchema = Type.Partial(DnsZoneInSchema, { additionalProperties: false });
export type DnsZonePatch = Static<typeof DnsZonePatchSchema>;

export const DnsRecordInSchema = Type.Object(
  {
    name: Name(253),
    type: Type.Union(DNS_RECORD_TYPES.map((t) => Type.Literal(t))),
    content: Type.String({ minLength: 1, maxLength: 4096 }),
    ttl: Type.Optional(Type.Union([Ttl, Type.Null()])),
    comment: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
    enabled: Type.Optional(Type.Boolean()),
    sort_order: Type.Optional(SortOrder),
  },
  { additionalProperties: false },
);
export type DnsRecordIn = Static<typeof DnsRecordInSchema>;
export const DnsRecordPatchSchema = Type.Partial(DnsRecordInSchema, { additionalProperties: false });
export type DnsRecordPatch = Static<typeof DnsRecordPatchSchema>;

export function groupFieldsOf(input: DnsGroupIn): GroupFields {
  return {
    name: input.name,
    bind_addresses: input.bind_addresses ?? [],
    cache_ttl_seconds: input.cache_ttl_seconds ?? DNS_DEFAULTS.cache_ttl_seconds,
    forwards: input.forwards ?? [],
    enabled: input.enabled ?? true,
  };
}

export function zoneFieldsOf(input: DnsZoneIn): ZoneFields {
  return {
    zone: input.zone,
    primary_ns: input.primary_ns ?? null,
    admin_email: input.admin_email ?? null,
    soa_refresh: input.soa_refresh ?? DNS_DEFAULTS.soa_refresh,
    soa_retry: input.soa_retry ?? DNS_DEFAULTS.soa_retry,
    soa_expire: input.soa_expire ?? DNS_DEFAULTS.soa_expire,
    soa_minimum: input.soa_minimum ?? DNS_DEFAULTS.soa_minimum,
    default_ttl: input.default_ttl ?? DNS_DEFAULTS.default_ttl,
    enabled: input.enabled ?? true,
  };
}

export function recordFieldsOf(input: DnsRecordIn): RecordFields {
  return {
    name: input.name,
    type: input.type,
    content: input.content,
    ttl: input.ttl ?? null,
    comment: input.comment ?? null,
    enabled: input.enabled ?? true,
    sort_order: input.sort_order ?? 0,
  };
}
