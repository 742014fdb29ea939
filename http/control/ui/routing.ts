import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN, NodeIdParams } from '../fleet/common.js';
import { FleetRoutingBlock, FleetRow, NodeOrigin, NodeSummary, NodeTimeline, OriginsSort, OriginsTop, RoutingRange } from '../routing/schemas.js';
import { CompareParam } from './series-params.js';
import { fleetRoutingBlock, fleetRoutingRows, nodeRoutingDashboard } from '../shared/routing-views.js';

const TAGS = ['console'];
const closed = { additionalProperties: false } as const;

/** `/ui/nodes/{id}/routing/dashboard` and `/ui/routing/fleet-overview`: the routing pages, one request each. */
export function uiRoutingRoutes(ctx: ServiceContext): ApiRouter {
  const r = new ApiRouter('/control/v1');
  const common = { security: ADMIN, tags: TAGS, method: 'get' as const };

  r.route({
    ...common,
    path: '/ui/nodes/{node_id}/routing/dashboard',
    summary: 'routing page bundle: summary, top 50 origins with names, size and churn on the range grid (24h without range)',
    params: NodeIdParams,
    query: Type.Object({ range: Type.Optional(RoutingRange), compare: Type.Optional(CompareParam) }, closed),
    responses: {
      200: Type.Object(
        { generated_at: Type.String(), node_id: Type.String(), summary: NodeSummary, origins: Type.Array(NodeOrigin), timeline: NodeTimeline },
        closed,
      ),
      404: 'unknown node <id> / no routing table reported for node <id>',
      422: 'invalid range or compare',
    },
    handler: async (req, res) => {
      res.json(await nodeRoutingDashboard(ctx, req.params.node_id, req.validQuery.range ?? '24h', req.validQuery.compare === '1'));
    },
  });

  r.route({
    ...common,
    path: '/ui/routing/fleet-overview',
    summary: "fleet routing bundle: the dashboard's routing block (24h trend) plus one row per node",
    query: Type.Object({ origins_sort: Type.Optional(OriginsSort), origins_top: OriginsTop }, closed),
    responses: {
      200: Type.Object({ generated_at: Type.String(), ...FleetRoutingBlock.properties, nodes: Type.Array(FleetRow) }, closed),
      422: 'invalid origins_sort or origins_top',
    },
    handler: async (req, res) => {
      const q = req.validQuery;
      const [block, nodes] = await Promise.all([
        fleetRoutingBlock(ctx, { range: '24h', origins_top: q.origins_top, origins_sort: q.origins_sort ?? 'count' }),
        fleetRoutingRows(ctx),
      ]);
      res.json({ generated_at: ctx.now().toISOString(), ...block, nodes });
    },
  });
  return r;
}
