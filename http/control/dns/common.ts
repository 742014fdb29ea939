import { Type } from '@sinclair/typebox';
import { NotFound } from '../../../domain/errors.js';
import { getDnsGroup, getDnsRecord, getDnsZone, type DnsGroupOut, type DnsRecordOut, type DnsZoneOut } from '../../../projections/dns/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ADMIN } from '../fleet/common.js';

/** Route options every DNS route shares. */
export const DNS_ROUTE = { security: ADMIN, tags: ['dns'] };

const Id = Type.Integer({ minimum: 1, maximum: 2147483647 });
export const GroupParams = Type.Object({ group_id: Id });
export const ZoneParams = Type.Object({ group_id: Id, zone_id: Id });
export const RecordParams = Type.Object({ group_id: Id, zone_id: Id, record_id: Id });

/** Path ids arrive as strings; the route schema has checked they are integers. */
export const ids = (params: Record<string, unknown>) => ({
  group: Number(params.group_id),
  zone: Number(params.zone_id),
  record: Number(params.record_id),
});

export async function groupOr404(ctx: ServiceContext, groupId: number): Promise<DnsGroupOut> {
  const group = await getDnsGroup(ctx.pool, groupId);
  if (!group) throw new NotFound(`unknown dns group ${groupId}`);
  return group;
}

/** The zone, after its group: an unknown group is named before an unknown zone. */
export async function zoneOr404(ctx: ServiceContext, groupId: number, zoneId: number): Promise<DnsZoneOut> {
  await groupOr404(ctx, groupId);
  const zone = await getDnsZone(ctx.pool, groupId, zoneId);
  if (!zone) throw new NotFound(`unknown dns zone ${zoneId}`);
  return zone;
}

export async function recordOr404(ctx: ServiceContext, zoneId: number, recordId: number): Promise<DnsRecordOut> {
  const record = await getDnsRecord(ctx.pool, zoneId, recordId);
  if (!record) throw new NotFound(`unknown dns record ${recordId}`);
  return record;
}
