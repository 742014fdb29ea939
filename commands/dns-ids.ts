import type { Queryable } from '../infra/db/pool.js';

export type DnsIdKind = 'group' | 'zone' | 'record';

const SEQUENCE: Record<DnsIdKind, string> = { group: 'dns_group_ids', zone: 'dns_zone_ids', record: 'dns_record_ids' };

/** Reserves a new DNS group, zone or record id (sequences of `commands/migrations/0003_dns_ids.sql`); never reused. */
export async function nextDnsId(db: Queryable, kind: DnsIdKind): Promise<number> {
  const { rows } = await db.query(`SELECT nextval('${SEQUENCE[kind]}') AS id`);
  return Number(rows[0].id);
}
