import { fileURLToPath } from 'node:url';
import { unreachable } from '../../domain/decider.js';
import { DNS_GROUP_EVENT_TYPES, type DnsGroupEvent } from '../../domain/dns/events.js';
import type { RecordedEvent, TransactionContext } from '../../infra/eventstore/types.js';
import { eventTime, type Projection } from '../runtime/projection.js';

/**
 * DNS groups, zones and records, inline so that a write answers with the group
 * or zone summary it just changed.
 */
export const dnsProjection: Projection = {
  name: 'dns',
  mode: 'inline',
  handles: DNS_GROUP_EVENT_TYPES,
  tables: ['dns_records', 'dns_zones', 'dns_groups'],
  migrations: { name: 'dns', dir: fileURLToPath(new URL('./migrations', import.meta.url)) },
  async apply(tx, recorded) {
    await applyDnsEvent(tx, { type: recorded.type, data: recorded.data } as DnsGroupEvent, recorded);
  },
};

/** `SET a = $n, ...` for the given columns of a partial change; values appended to `values`. */
function sets(changes: Record<string, unknown>, columns: readonly string[], values: unknown[], json: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const column of columns) {
    if (changes[column] === undefined) continue;
    values.push(json.includes(column) ? JSON.stringify(changes[column]) : changes[column]);
    out.push(`${column} = $${values.length}`);
  }
  return out;
}

const ZONE_COLUMNS = ['zone', 'primary_ns', 'admin_email', 'soa_refresh', 'soa_retry', 'soa_expire', 'soa_minimum', 'default_ttl', 'enabled'] as const;
const RECORD_COLUMNS = ['name', 'type', 'content', 'ttl', 'comment', 'enabled', 'sort_order'] as const;

async function applyDnsEvent(tx: TransactionContext, event: DnsGroupEvent, recorded: RecordedEvent): Promise<void> {
  const at = eventTime(recorded);
  const touchGroup = (id: number) => tx.query(`UPDATE dns_groups SET updated_at = $2 WHERE id = $1`, [id, at]);
  const touchZone = (id: number, serial: number) => tx.query(`UPDATE dns_zones SET soa_serial = $2, updated_at = $3 WHERE id = $1`, [id, serial, at]);
  switch (event.type) {
    case 'DnsGroupCreated': {
      const g = event.data.group;
      await tx.query(
        `INSERT INTO dns_groups (id, name, bind_addresses, cache_ttl_seconds, forwards, enabled, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
        [event.data.group_id, g.name, JSON.stringify(g.bind_addresses), g.cache_ttl_seconds, JSON.stringify(g.forwards), g.enabled, at],
      );
      return;
    }
    case 'DnsGroupUpdated': {
      const values: unknown[] = [event.data.group_id, at];
      const columns = sets(event.data.changes, ['name', 'bind_addresses', 'cache_ttl_seconds', 'forwards', 'enabled'], values, ['bind_addresses', 'forwards']);
      await tx.query(`UPDATE dns_groups SET ${[...columns, 'updated_at = $2'].join(', ')} WHERE id = $1`, values);
      for (const { zone_id, serial } of event.data.serials ?? []) await touchZone(zone_id, serial);
      return;
    }
    case 'DnsGroupDeleted':
      for (const [table, column] of [
        ['dns_records', 'group_id'],
        ['dns_zones', 'group_id'],
        ['dns_groups', 'id'],
      ]) {
        await tx.query(`DELETE FROM ${table} WHERE ${column} = $1`, [event.data.group_id]);
      }
      return;
    case 'DnsZoneCreated': {
      const z = event.data.zone;
      await tx.query(
        `INSERT INTO dns_zones (id, group_id, zone, primary_ns, admin_email, soa_serial, soa_refresh, soa_retry, soa_expire, soa_minimum, default_ttl, enabled, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)`,
        [
          event.data.zone_id,
          event.data.group_id,
          z.zone,
          z.primary_ns,
          z.admin_email,
          event.data.serial,
          z.soa_refresh,
          z.soa_retry,
          z.soa_expire,
          z.soa_minimum,
          z.default_ttl,
          z.enabled,
          at,
        ],
      );
      await touchGroup(event.data.group_id);
      return;
    }
    case 'DnsZoneUpdated': {
      const values: unknown[] = [event.data.zone_id, at, event.data.serial];
      const columns = sets(event.data.changes, ZONE_COLUMNS, values);
      await tx.query(`UPDATE dns_zones SET ${[...columns, 'updated_at = $2', 'soa_serial = $3'].join(', ')} WHERE id = $1`, values);
      await touchGroup(event.data.group_id);
      return;
    }
    case 'DnsZoneDeleted':
      await tx.query(`DELETE FROM dns_records WHERE zone_id = $1`, [event.data.zone_id]);
      await tx.query(`DELETE FROM dns_zones WHERE id = $1`, [event.data.zone_id]);
      await touchGroup(event.data.group_id);
      return;
    case 'DnsRecordCreated': {
      const r = event.data.record;
      await tx.query(
        `INSERT INTO dns_records (id, zone_id, group_id, name, type, content, ttl, comment, enabled, sort_order, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
        [event.data.record_id, event.data.zone_id, event.data.group_id, r.name, r.type, r.content, r.ttl, r.comment, r.enabled, r.sort_order, at],
      );
      await touchZone(event.data.zone_id, event.data.serial);
      return;
    }
    case 'DnsRecordUpdated': {
      const values: unknown[] = [event.data.record_id, at];
      const columns = sets(event.data.changes, RECORD_COLUMNS, values);
      await tx.query(`UPDATE dns_records SET ${[...columns, 'updated_at = $2'].join(', ')} WHERE id = $1`, values);
      await touchZone(event.data.zone_id, event.data.serial);
      return;
    }
    case 'DnsRecordDeleted':
      await tx.query(`DELETE FROM dns_records WHERE id = $1`, [event.data.record_id]);
      await touchZone(event.data.zone_id, event.data.serial);
      return;
    case 'DnsGroupMemberJoined':
    case 'DnsGroupMemberLeft':
      // Members are counted from nodes.dns_group_id, which the node's own event sets.
      return;
    default:
      return unreachable(event);
  }
}
