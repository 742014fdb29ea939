import { Type } from '@sinclair/typebox';
import { DEFAULT_TRAFFIC_GRID, gridEnd, gridEndingAt } from '../../../domain/series/grid.js';
import { interfaceArchive } from '../../../infra/telemetry/series-queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN, NodeIdParams, nodeOr404 } from '../fleet/common.js';

/**
 * `GET /admin/nodes/{node_id}/traffic` (document 2): the node's 5-minute interface
 * traffic archive rows (cumulative counters as the snapshots reported them, at the
 * agent's time) over the console's default window, the last 120 buckets.
 */
export function adminTrafficRoutes(ctx: ServiceContext): ApiRouter {
  return new ApiRouter('/control/v1').route({
    method: 'get',
    path: '/admin/nodes/{node_id}/traffic',
    summary: '5-minute archive rows of the per-interface traffic counters, last 120 buckets, ascending',
    security: ADMIN,
    tags: ['health'],
    params: NodeIdParams,
    responses: {
      200: Type.Object({
        node_id: Type.String(),
        series: Type.Array(Type.Object({ at: Type.String(), interface: Type.String(), rx_bytes: Type.Integer(), tx_bytes: Type.Integer() })),
      }),
      404: 'unknown node <id>',
    },
    handler: async (req, res) => {
      const node = await nodeOr404(ctx, req.params.node_id);
      const grid = gridEndingAt(DEFAULT_TRAFFIC_GRID, ctx.now());
      const series = await interfaceArchive(ctx.pool, node.node_id, new Date(grid.start * 1000), new Date(gridEnd(grid) * 1000));
      res.json({ node_id: node.node_id, series });
    },
  });
}
