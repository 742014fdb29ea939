import { Type } from '@sinclair/typebox';
import { assignDnsGroup } from '../../../commands/dns.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { NodeOutSchema } from '../fleet/schemas.js';
import { fleetDeps, metadataOf, NodeIdParams, nodeOr404 } from '../fleet/common.js';
import { DNS_ROUTE } from './common.js';

const Body = Type.Object({ dns_group_id: Type.Union([Type.Integer({ minimum: 1, maximum: 2147483647 }), Type.Null()]) }, { additionalProperties: false });

/** `PUT /admin/nodes/{node_id}/dns-group`: assigns or clears the node's DNS group; answers the NodeOut. */
export function nodeDnsGroupRoutes(ctx: ServiceContext): ApiRouter {
  const deps = fleetDeps(ctx);
  const r = new ApiRouter('/control/v1');
  r.route({
    ...DNS_ROUTE,
    method: 'put',
    path: '/admin/nodes/{node_id}/dns-group',
    summary: "assign (integer) or clear (null) the node's DNS group; the node is re-materialised",
    params: NodeIdParams,
    body: Body,
    responses: { 200: NodeOutSchema, 400: 'unknown dns group', 404: 'unknown node', 422: 'invalid body' },
    handler: async (req, res) => {
      await assignDnsGroup(deps, req.params.node_id, req.body.dns_group_id, metadataOf(ctx, req, res));
      res.json(await nodeOr404(ctx, req.params.node_id));
    },
  });
  return r;
}
