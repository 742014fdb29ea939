import { Type, type TSchema } from '@sinclair/typebox';
import { DNS_RECORD_TYPES } from '../../../domain/desired-state/schema.js';
import type { DnsGroupOut, DnsRecordOut, DnsZoneOut } from '../../../projections/dns/queries.js';
import { component, type Describes } from '../../shared/routes.js';

/** The bodies the DNS routes answer (document 2, "DNS group, zone, record"), as shared components. */

const Nullable = <T extends TSchema>(t: T, description: string) => Type.Union([t, Type.Null()], { description });
const times = {
  created_at: Type.String({ format: 'date-time', description: 'when it was created' }),
  updated_at: Type.String({ format: 'date-time', description: 'when it last changed' }),
};

export const DnsGroupOutSchema = component(
  'DnsGroupOut',
  Type.Object(
    {
      id: Type.Integer({ description: 'group id' }),
      name: Type.String({ description: 'unique group name' }),
      bind_addresses: Type.Array(Type.String(), { description: 'addresses the members answer on' }),
      cache_ttl_seconds: Type.Integer({ description: 'resolver cache TTL (default 300)' }),
      forwards: Type.Array(
        Type.Object({
          zone: Type.String({ description: 'the zone forwarded' }),
          upstreams: Type.Array(Type.String(), { description: 'servers it is forwarded to' }),
        }),
        { description: 'zones forwarded to upstream servers' },
      ),
      enabled: Type.Boolean({ description: "false leaves the group out of its members' desired state" }),
      zone_count: Type.Integer({ minimum: 0, description: 'zones of the group' }),
      member_count: Type.Integer({ minimum: 0, description: 'nodes subscribed through `dns_group_id` (several form an anycast set)' }),
      ...times,
    },
    { description: 'a DNS group' },
  ),
);

export const DnsZoneOutSchema = component(
  'DnsZoneOut',
  Type.Object(
    {
      id: Type.Integer({ description: 'zone id' }),
      group_id: Type.Integer({ description: 'the group the zone belongs to' }),
      zone: Type.String({ description: 'domain name (RFC 2317 names with a slash allowed)' }),
      primary_ns: Nullable(Type.String(), 'primary name server; null: `ns1.<zone>`'),
      admin_email: Nullable(Type.String(), 'SOA contact; null: `hostmaster@<zone>`'),
      soa_refresh: Type.Integer({ description: 'SOA refresh, seconds (default 3600)' }),
      soa_retry: Type.Integer({ description: 'SOA retry, seconds (default 900)' }),
      soa_expire: Type.Integer({ description: 'SOA expire, seconds (default 604800)' }),
      soa_minimum: Type.Integer({ description: 'SOA minimum (negative caching), seconds (default 300)' }),
      default_ttl: Type.Integer({ description: 'TTL of records without one (default 3600)' }),
      enabled: Type.Boolean({ description: "false leaves the zone out of its members' desired state" }),
      soa_serial: Type.Integer({ description: 'SOA serial; moves on with every change of the zone' }),
      record_count: Type.Integer({ minimum: 0, description: 'records of the zone' }),
      name_server_problem: Nullable(
        Type.String(),
        'why members leave this enabled zone out (an in-zone name server without an address); null when BIND can load it',
      ),
      ...times,
    },
    { description: 'a DNS zone' },
  ),
);

export const DnsRecordOutSchema = component(
  'DnsRecordOut',
  Type.Object(
    {
      id: Type.Integer({ description: 'record id' }),
      group_id: Type.Integer({ description: 'the group of its zone' }),
      zone_id: Type.Integer({ description: 'the zone the record belongs to' }),
      name: Type.String({ description: 'owner name relative to the zone (`@` for the apex)' }),
      type: Type.Union(
        DNS_RECORD_TYPES.map((t) => Type.Literal(t)),
        { description: 'record type' },
      ),
      content: Type.String({ description: 'record data in zone-file form' }),
      ttl: Nullable(Type.Integer(), "TTL; null: the zone's default"),
      comment: Nullable(Type.String(), 'free comment'),
      enabled: Type.Boolean({ description: 'false leaves the record out of the zone' }),
      sort_order: Type.Integer({ description: 'order in the zone file' }),
      ...times,
    },
    { description: 'a DNS record' },
  ),
);

export const ZoneWrite = (description: string, zone: TSchema = DnsZoneOutSchema) => Type.Object({ zone, group: DnsGroupOutSchema }, { description });
export const RecordWrite = (description: string, record: TSchema = DnsRecordOutSchema) => Type.Object({ record, zone: DnsZoneOutSchema }, { description });

export const checked: [
  Describes<typeof DnsGroupOutSchema, DnsGroupOut>,
  Describes<typeof DnsZoneOutSchema, DnsZoneOut>,
  Describes<typeof DnsRecordOutSchema, Omit<DnsRecordOut, 'type'> & { type: (typeof DNS_RECORD_TYPES)[number] }>,
] = [true, true, true];
