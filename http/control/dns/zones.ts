import { createDnsZone, deleteDnsZone, updateDnsZone } from '../../../commands/dns.js';
import { DnsZoneInSchema, DnsZonePatchSchema } from '../../../domain/dns/specs.js';
import { listDnsZones } from '../../../projections/dns/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { Type } from '@sinclair/typebox';
import { DnsZoneOutSchema, ZoneWrite } from './schemas.js';
import { fleetDeps, metadataOf } from '../fleet/common.js';
import { DNS_ROUTE, GroupParams, groupOr404, ids, ZoneParams, zoneOr404 } from './common.js';

/**
 * Zones of a DNS group. Writes answer console-style, wrapping the parent:
 * `{zone, group}`, with `zone` null after a delete (200, not 204).
 */
export function dnsZoneRoutes(ctx: ServiceContext): ApiRouter {
  const deps = fleetDeps(ctx);
  const r = new ApiRouter('/control/v1');
  const answer = async (groupId: number, zoneId: number | null) => ({
    zone: zoneId === null ? null : await zoneOr404(ctx, groupId, zoneId),
    group: await groupOr404(ctx, groupId),
  });
  r.route({
    ...DNS_ROUTE,
    method: 'get',
    path: '/admin/dns-groups/{group_id}/zones',
    summary: "the group's zones by name, with record_count",
    params: GroupParams,
    responses: { 200: Type.Array(DnsZoneOutSchema, { description: 'zones by name' }), 404: 'unknown dns group' },
    handler: async (req, res) => {
      const { group } = ids(req.params);
      await groupOr404(ctx, group);
      res.json(await listDnsZones(ctx.pool, group));
    },
  });
  r.route({
    ...DNS_ROUTE,
    method: 'post',
    path: '/admin/dns-groups/{group_id}/zones',
    summary: 'create a zone; every member is re-materialised',
    params: GroupParams,
    body: DnsZoneInSchema,
    responses: { 201: ZoneWrite('the zone created and its group'), 404: 'unknown dns group', 409: 'zone already exists in the group', 422: 'invalid field' },
    handler: async (req, res) => {
      const { group } = ids(req.params);
      const { result: zone } = await createDnsZone(deps, group, req.body, metadataOf(ctx, req, res));
      res.status(201).json(await answer(group, zone));
    },
  });
  r.route({
    ...DNS_ROUTE,
    method: 'patch',
    path: '/admin/dns-groups/{group_id}/zones/{zone_id}',
    summary: 'partial update of a zone; its SOA serial moves on (a PATCH that changes nothing writes nothing)',
    params: ZoneParams,
    body: DnsZonePatchSchema,
    responses: {
      200: ZoneWrite('the zone updated and its group'),
      404: 'unknown dns group or zone',
      409: 'zone already exists in the group',
      422: 'invalid field',
    },
    handler: async (req, res) => {
      const { group, zone } = ids(req.params);
      await updateDnsZone(deps, group, zone, req.body, metadataOf(ctx, req, res));
      res.json(await answer(group, zone));
    },
  });
  r.route({
    ...DNS_ROUTE,
    method: 'delete',
    path: '/admin/dns-groups/{group_id}/zones/{zone_id}',
    summary: 'delete a zone with its records; answers the refreshed group summary',
    params: ZoneParams,
    responses: { 200: ZoneWrite('zone deleted: `zone` is null', Type.Null({ description: 'the zone was deleted' })), 404: 'unknown dns group or zone' },
    handler: async (req, res) => {
      const { group, zone } = ids(req.params);
      await deleteDnsZone(deps, group, zone, metadataOf(ctx, req, res));
      res.json(await answer(group, null));
    },
  });
  return r;
}
