import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN, NodeIdParams, nodeOr404 } from '../fleet/common.js';
import { CompareParam, TrafficRangeParam } from './series-params.js';
import { TrafficTrend, trafficTrend } from './traffic-trend.js';

const TAGS = ['console'];
export const TrendQuerySchema = Type.Object({ range: Type.Optional(TrafficRangeParam), compare: Type.Optional(CompareParam) }, { additionalProperties: false });

/** `/ui/fleet/traffic` and `/ui/nodes/{node_id}/traffic`: WireGuard throughput in bytes per second on the trend grid. */
export function trafficRoutes(ctx: ServiceContext): ApiRouter {
  const common = { method: 'get' as const, security: ADMIN, tags: TAGS, query: TrendQuerySchema };
  return new ApiRouter('/control/v1')
    .route({
      ...common,
      path: '/ui/fleet/traffic',
      summary: 'fleet throughput summed per time bucket (bytes per second over every node)',
      responses: { 200: TrafficTrend, 422: 'invalid range or compare' },
      handler: async (req, res) => {
        res.json(await trafficTrend(ctx.pool, req.validQuery, ctx.now(), null));
      },
    })
    .route({
      ...common,
      path: '/ui/nodes/{node_id}/traffic',
      summary: "a node's throughput in bytes per second (sum over its WireGuard interfaces)",
      params: NodeIdParams,
      responses: { 200: Type.Intersect([Type.Object({ node_id: Type.String() }), TrafficTrend]), 404: 'unknown node <id>', 422: 'invalid range or compare' },
      handler: async (req, res) => {
        const node = await nodeOr404(ctx, req.params.node_id);
        res.json({ node_id: node.node_id, ...(await trafficTrend(ctx.pool, req.validQuery, ctx.now(), [node.node_id])) });
      },
    });
}
