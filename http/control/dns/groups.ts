import { createDnsGroup, deleteDnsGroup, updateDnsGroup } from '../../../commands/dns.js';
import { DnsGroupInSchema, DnsGroupPatchSchema } from '../../../domain/dns/specs.js';
import { listDnsGroups } from '../../../projections/dns/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { Type } from '@sinclair/typebox';
import { DnsGroupOutSchema } from './schemas.js';
import { fleetDeps, metadataOf } from '../fleet/common.js';
import { DNS_ROUTE, GroupParams, groupOr404, ids } from './common.js';
import { KiB } from '../../shared/body-limit.js';

/** 64 forwards of a 254-character zone and 16 upstreams of 64 characters, 32 bind addresses: about 90 KB. */
export const DNS_GROUP_BODY_LIMIT_BYTES = 256 * KiB;

/** `/admin/dns-groups`: list, create, read (with counts), update, delete. Writes re-materialise every member. */
export function dnsGroupRoutes(ctx: ServiceContext): ApiRouter {
  const deps = fleetDeps(ctx);
  const r = new ApiRouter('/control/v1');
  r.route({
    ...DNS_ROUTE,
    method: 'get',
    path: '/admin/dns-groups',
    summary: 'all DNS groups by name, with zone_count and member_count',
    responses: { 200: Type.Array(DnsGroupOutSchema, { description: 'DNS groups' }) },
    handler: async (_req, res) => {
      res.json(await listDnsGroups(ctx.pool));
    },
  });
  r.route({
    ...DNS_ROUTE,
    method: 'post',
    path: '/admin/dns-groups',
    summary: 'create a DNS group',
    body: DnsGroupInSchema,
    bodyLimit: DNS_GROUP_BODY_LIMIT_BYTES,
    responses: { 201: DnsGroupOutSchema, 409: 'dns group already exists', 422: 'invalid field' },
    handler: async (req, res) => {
      const { result: id } = await createDnsGroup(deps, req.body, metadataOf(ctx, req, res));
      res.status(201).json(await groupOr404(ctx, id));
    },
  });
  r.route({
    ...DNS_ROUTE,
    method: 'get',
    path: '/admin/dns-groups/{group_id}',
    summary: 'one DNS group with its counts',
    params: GroupParams,
    responses: { 200: DnsGroupOutSchema, 404: 'unknown dns group' },
    handler: async (req, res) => {
      res.json(await groupOr404(ctx, ids(req.params).group));
    },
  });
  r.route({
    ...DNS_ROUTE,
    method: 'patch',
    path: '/admin/dns-groups/{group_id}',
    summary: 'partial update; every member is re-materialised in the same append (a PATCH that changes nothing writes nothing)',
    params: GroupParams,
    body: DnsGroupPatchSchema,
    bodyLimit: DNS_GROUP_BODY_LIMIT_BYTES,
    responses: { 200: DnsGroupOutSchema, 404: 'unknown dns group', 409: 'dns group name already exists', 422: 'invalid field' },
    handler: async (req, res) => {
      const { group } = ids(req.params);
      await updateDnsGroup(deps, group, req.body, metadataOf(ctx, req, res));
      res.json(await groupOr404(ctx, group));
    },
  });
  r.route({
    ...DNS_ROUTE,
    method: 'delete',
    path: '/admin/dns-groups/{group_id}',
    summary: 'delete a group; its members get dns_group_id null and publish without DNS',
    params: GroupParams,
    responses: { 204: 'deleted', 404: 'unknown dns group' },
    handler: async (req, res) => {
      await deleteDnsGroup(deps, ids(req.params).group, metadataOf(ctx, req, res));
      res.status(204).end();
    },
  });
  return r;
}
