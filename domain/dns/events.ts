import type { DomainEvent } from '../decider.js';

/**
 * Events of a DNS group's stream (`dnsgroup-<id>`): the group, its zones and
 * their records, and which nodes joined or left it. Zones and records live in
 * the group's stream because every write to them re-materialises the same set
 * of nodes (the group's members) and zone names are unique per group: one
 * stream is one consistency boundary for both.
 *
 * Membership is written twice in the same append: `NodeDnsGroupAssigned` on
 * the node's stream (the node's own fact, read by `materialise`) and
 * `DnsGroupMemberJoined`/`Left` here, so that a group write and a concurrent
 * join conflict on this stream instead of missing each other.
 *
 * Zone and record events carry the zone's new SOA serial, decided once, so a
 * replay or projection never has to recompute it.
 */

export interface Forward {
  zone: string;
  upstreams: string[];
}

export interface GroupFields {
  name: string;
  bind_addresses: string[];
  cache_ttl_seconds: number;
  forwards: Forward[];
  enabled: boolean;
}

export interface ZoneFields {
  zone: string;
  /** Null: `ns1.<zone>`. */
  primary_ns: string | null;
  /** Null: `hostmaster@<zone>`. */
  admin_email: string | null;
  soa_refresh: number;
  soa_retry: number;
  soa_expire: number;
  soa_minimum: number;
  default_ttl: number;
  enabled: boolean;
}

export interface RecordFields {
  name: string;
  type: string;
  content: string;
  ttl: number | null;
  comment: string | null;
  enabled: boolean;
  sort_order: number;
}

export interface ZoneSerial {
  zone_id: number;
  serial: number;
}

export type DnsGroupEvent =
  | DomainEvent<'DnsGroupCreated', { group_id: number; group: GroupFields }>
  /**
   * `serials`: zones whose content moves with the bind addresses (the addresses
   * an in-zone name server is given, `name-servers.ts`) and their new serial;
   * absent when none.
   */
  | DomainEvent<'DnsGroupUpdated', { group_id: number; changes: Partial<GroupFields>; serials?: ZoneSerial[] }>
  | DomainEvent<'DnsGroupDeleted', { group_id: number }>
  | DomainEvent<'DnsZoneCreated', { group_id: number; zone_id: number; zone: ZoneFields; serial: number }>
  | DomainEvent<'DnsZoneUpdated', { group_id: number; zone_id: number; changes: Partial<ZoneFields>; serial: number }>
  | DomainEvent<'DnsZoneDeleted', { group_id: number; zone_id: number }>
  | DomainEvent<'DnsRecordCreated', { group_id: number; zone_id: number; record_id: number; record: RecordFields; serial: number }>
  | DomainEvent<'DnsRecordUpdated', { group_id: number; zone_id: number; record_id: number; changes: Partial<RecordFields>; serial: number }>
  | DomainEvent<'DnsRecordDeleted', { group_id: number; zone_id: number; record_id: number; serial: number }>
  | DomainEvent<'DnsGroupMemberJoined', { group_id: number; node_id: string }>
  | DomainEvent<'DnsGroupMemberLeft', { group_id: number; node_id: string }>;

export type DnsGroupEventType = DnsGroupEvent['type'];

export const DNS_GROUP_EVENT_TYPES: readonly DnsGroupEventType[] = [
  'DnsGroupCreated',
  'DnsGroupUpdated',
  'DnsGroupDeleted',
  'DnsZoneCreated',
  'DnsZoneUpdated',
  'DnsZoneDeleted',
  'DnsRecordCreated',
  'DnsRecordUpdated',
  'DnsRecordDeleted',
  'DnsGroupMemberJoined',
  'DnsGroupMemberLeft',
];

export const dnsGroupStream = (groupId: number): string => `dnsgroup-${groupId}`;
