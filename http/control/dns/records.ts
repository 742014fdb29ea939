import { createDnsRecord, deleteDnsRecord, updateDnsRecord } from '../../../commands/dns.js';
import { DnsRecordInSchema, DnsRecordPatchSchema } from '../../../domain/dns/specs.js';
import { listDnsRecords } from '../../../projections/dns/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { Type } from '@sinclair/typebox';
import { DnsRecordOutSchema, RecordWrite } from './schemas.js';
import { fleetDeps, metadataOf } from '../fleet/common.js';
import { DNS_ROUTE, ids, RecordParams, recordOr404, ZoneParams, zoneOr404 } from './common.js';

/**
 * Records of a zone. Writes answer console-style, wrapping the parent:
 * `{record, zone}`, with `record` null after a delete (200, not 204).
 */
export function dnsRecordRoutes(ctx: ServiceContext): ApiRouter {
  const deps = fleetDeps(ctx);
  const r = new ApiRouter('/control/v1');
  const answer = async (groupId: number, zoneId: number, recordId: number | null) => ({
    record: recordId === null ? null : await recordOr404(ctx, zoneId, recordId),
    zone: await zoneOr404(ctx, groupId, zoneId),
  });
  r.route({
    ...DNS_ROUTE,
    method: 'get',
    path: '/admin/dns-groups/{group_id}/zones/{zone_id}/records',
    summary: "the zone's records ordered by (sort_order, id)",
    params: ZoneParams,
    responses: { 200: Type.Array(DnsRecordOutSchema, { description: 'records ordered by (sort_order, id)' }), 404: 'unknown dns group or zone' },
    handler: async (req, res) => {
      const { group, zone } = ids(req.params);
      await zoneOr404(ctx, group, zone);
      res.json(await listDnsRecords(ctx.pool, zone));
    },
  });
  r.route({
    ...DNS_ROUTE,
    method: 'post',
    path: '/admin/dns-groups/{group_id}/zones/{zone_id}/records',
    summary: 'create a record (content checked per type); every member is re-materialised',
    params: ZoneParams,
    body: DnsRecordInSchema,
    responses: {
      201: RecordWrite('the record created and its zone'),
      404: 'unknown dns group or zone',
      409: 'CNAME conflict',
      422: 'invalid field or content',
    },
    handler: async (req, res) => {
      const { group, zone } = ids(req.params);
      const { result: record } = await createDnsRecord(deps, group, zone, req.body, metadataOf(ctx, req, res));
      res.status(201).json(await answer(group, zone, record));
    },
  });
  r.route({
    ...DNS_ROUTE,
    method: 'patch',
    path: '/admin/dns-groups/{group_id}/zones/{zone_id}/records/{record_id}',
    summary: 'partial update of a record; type and content are checked together (a PATCH that changes nothing writes nothing)',
    params: RecordParams,
    body: DnsRecordPatchSchema,
    responses: {
      200: RecordWrite('the record updated and its zone'),
      404: 'unknown dns group, zone or record',
      409: 'CNAME conflict',
      422: 'invalid field or content',
    },
    handler: async (req, res) => {
      const { group, zone, record } = ids(req.params);
      await updateDnsRecord(deps, group, zone, record, req.body, metadataOf(ctx, req, res));
      res.json(await answer(group, zone, record));
    },
  });
  r.route({
    ...DNS_ROUTE,
    method: 'delete',
    path: '/admin/dns-groups/{group_id}/zones/{zone_id}/records/{record_id}',
    summary: 'delete a record; answers the refreshed zone summary (record_count)',
    params: RecordParams,
    responses: {
      200: RecordWrite('record deleted: `record` is null', Type.Null({ description: 'the record was deleted' })),
      404: 'unknown dns group, zone or record',
    },
    handler: async (req, res) => {
      const { group, zone, record } = ids(req.params);
      await deleteDnsRecord(deps, group, zone, record, metadataOf(ctx, req, res));
      res.json(await answer(group, zone, null));
    },
  });
  return r;
}
