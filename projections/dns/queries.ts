import { defaultPrimaryNs } from '../../domain/dns/desired-state.js';
import type { GroupFields, RecordFields, ZoneFields } from '../../domain/dns/events.js';
import { nameServerAddresses } from '../../domain/dns/name-servers.js';
import type { Queryable } from '../../infra/db/pool.js';

/**
 * The read side of DNS groups, zones and records, in the contract's shapes: the
 * fields the events carry, plus ids, counts, serial and timestamps.
 */

export interface DnsGroupOut extends GroupFields {
  id: number;
  zone_count: number;
  member_count: number;
  created_at: string;
  updated_at: string;
}

export interface DnsZoneOut extends ZoneFields {
  id: number;
  group_id: number;
  soa_serial: number;
  record_count: number;
  /**
   * Why members leave the zone out of their desired state although it is
   * enabled: an in-zone name server with no address the server can give it
   * (`domain/dns/name-servers.ts`); null when BIND can load the zone.
   */
  name_server_problem: string | null;
  created_at: string;
  updated_at: string;
}

export interface DnsRecordOut extends RecordFields {
  id: number;
  group_id: number;
  zone_id: number;
  created_at: string;
  updated_at: string;
}

const iso = (t: Date | string) => new Date(t).toISOString();

const GROUPS = `
  SELECT g.*,
    (SELECT count(*) FROM dns_zones z WHERE z.group_id = g.id)::int AS zone_count,
    (SELECT count(*) FROM nodes n WHERE n.dns_group_id = g.id)::int AS member_count
  FROM dns_groups g`;

function groupOut(r: Record<string, any>): DnsGroupOut {
  return {
    id: r.id,
    name: r.name,
    bind_addresses: r.bind_addresses,
    cache_ttl_seconds: r.cache_ttl_seconds,
    forwards: r.forwards,
    enabled: r.enabled,
    zone_count: r.zone_count,
    member_count: r.member_count,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export async function listDnsGroups(db: Queryable): Promise<DnsGroupOut[]> {
  const { rows } = await db.query(`${GROUPS} ORDER BY g.name, g.id`);
  return rows.map(groupOut);
}

export async function getDnsGroup(db: Queryable, id: number): Promise<DnsGroupOut | undefined> {
  const { rows } = await db.query(`${GROUPS} WHERE g.id = $1`, [id]);
  return rows[0] ? groupOut(rows[0]) : undefined;
}

/** With what `name_server_problem` reads: the group's bind addresses and the zone's enabled records of the types it looks at. */
const ZONES = `
  SELECT z.*,
    (SELECT count(*) FROM dns_records r WHERE r.zone_id = z.id)::int AS record_count,
    g.bind_addresses AS group_bind_addresses,
    (SELECT coalesce(jsonb_agg(jsonb_build_object('name', r.name, 'type', r.type, 'content', r.content)), '[]'::jsonb)
       FROM dns_records r WHERE r.zone_id = z.id AND r.enabled AND r.type IN ('A', 'AAAA', 'CNAME', 'NS')) AS name_records
  FROM dns_zones z JOIN dns_groups g ON g.id = z.group_id`;

function nameServerProblem(r: Record<string, any>): string | null {
  const check = nameServerAddresses({ zone: r.zone, primary_ns: r.primary_ns ?? defaultPrimaryNs(r.zone), records: r.name_records }, r.group_bind_addresses);
  return check.ok ? null : check.problem;
}

function zoneOut(r: Record<string, any>): DnsZoneOut {
  return {
    id: r.id,
    group_id: r.group_id,
    zone: r.zone,
    primary_ns: r.primary_ns,
    admin_email: r.admin_email,
    soa_serial: Number(r.soa_serial),
    soa_refresh: r.soa_refresh,
    soa_retry: r.soa_retry,
    soa_expire: r.soa_expire,
    soa_minimum: r.soa_minimum,
    default_ttl: r.default_ttl,
    enabled: r.enabled,
    record_count: r.record_count,
    name_server_problem: nameServerProblem(r),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** The group's zones by name. */
export async function listDnsZones(db: Queryable, groupId: number): Promise<DnsZoneOut[]> {
  const { rows } = await db.query(`${ZONES} WHERE z.group_id = $1 ORDER BY z.zone, z.id`, [groupId]);
  return rows.map(zoneOut);
}

/** One zone of the group; undefined when it does not exist or belongs to another group. */
export async function getDnsZone(db: Queryable, groupId: number, zoneId: number): Promise<DnsZoneOut | undefined> {
  const { rows } = await db.query(`${ZONES} WHERE z.id = $1 AND z.group_id = $2`, [zoneId, groupId]);
  return rows[0] ? zoneOut(rows[0]) : undefined;
}

function recordOut(r: Record<string, any>): DnsRecordOut {
  return {
    id: r.id,
    group_id: r.group_id,
    zone_id: r.zone_id,
    name: r.name,
    type: r.type,
    content: r.content,
    ttl: r.ttl,
    comment: r.comment,
    enabled: r.enabled,
    sort_order: r.sort_order,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** The zone's records ordered by (sort_order, id), as the contract says. */
export async function listDnsRecords(db: Queryable, zoneId: number): Promise<DnsRecordOut[]> {
  const { rows } = await db.query(`SELECT * FROM dns_records WHERE zone_id = $1 ORDER BY sort_order, id`, [zoneId]);
  return rows.map(recordOut);
}

export async function getDnsRecord(db: Queryable, zoneId: number, recordId: number): Promise<DnsRecordOut | undefined> {
  const { rows } = await db.query(`SELECT * FROM dns_records WHERE id = $1 AND zone_id = $2`, [recordId, zoneId]);
  return rows[0] ? recordOut(rows[0]) : undefined;
}
