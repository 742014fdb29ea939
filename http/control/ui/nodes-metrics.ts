import { Type } from '@sinclair/typebox';
import { bucketIndex, bucketStarts, gridEndingAt, METRICS_GRIDS, METRICS_RANGES, type MetricsRange } from '../../../domain/series/grid.js';
import { rssMb } from '../../../domain/series/units.js';
import { metricsCells } from '../../../infra/telemetry/series-queries.js';
import { listNodes } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN } from '../fleet/common.js';
import { ResponseCache } from './response-cache.js';
import { iso, NullableNumber, round3 } from './series-params.js';

/** Document 3, Limits: node metrics matrix cache. */
export const METRICS_CACHE_MS = 5000;

const Series = Type.Array(NullableNumber);
const NodeMetrics = Type.Object({
  node_id: Type.String(),
  cpu_percent: Series,
  rss_mb: Series,
  rx_bytes_per_sec: Series,
  tx_bytes_per_sec: Series,
  reconcile_failures: Type.Array(Type.Union([Type.Integer(), Type.Null()]), {
    description: 'failed reconciliation reports; 0 reported without failures, null not reported',
  }),
});
const MetricsMatrix = Type.Object({
  generated_at: Type.String(),
  range: Type.String(),
  timestamps: Type.Array(Type.String(), { description: 'bucket starts, the grid every series is index-aligned to' }),
  nodes: Type.Array(NodeMetrics),
});
type NodeMetrics = {
  node_id: string;
  cpu_percent: (number | null)[];
  rss_mb: (number | null)[];
  rx_bytes_per_sec: (number | null)[];
  tx_bytes_per_sec: (number | null)[];
  reconcile_failures: (number | null)[];
};

/** The full matrix: every node of the fleet (by node id), one value per bucket of the range's fixed grid, null where nothing was reported. */
export async function nodesMetrics(ctx: ServiceContext, range: MetricsRange) {
  const now = ctx.now();
  const grid = gridEndingAt(METRICS_GRIDS[range], now);
  const [nodes, cells] = await Promise.all([listNodes(ctx.pool), metricsCells(ctx.pool, grid)]);
  const blank = () => Array<number | null>(grid.points).fill(null);
  const rows = new Map<string, NodeMetrics>(
    nodes.map((n) => [
      n.node_id,
      { node_id: n.node_id, cpu_percent: blank(), rss_mb: blank(), rx_bytes_per_sec: blank(), tx_bytes_per_sec: blank(), reconcile_failures: blank() },
    ]),
  );
  for (const c of cells) {
    const row = rows.get(c.node_id);
    const i = bucketIndex(grid, c.b);
    if (!row || i < 0) continue;
    row.cpu_percent[i] = round3(c.cpu);
    row.rss_mb[i] = c.rss === null ? null : rssMb(c.rss);
    row.rx_bytes_per_sec[i] = round3(c.rx);
    row.tx_bytes_per_sec[i] = round3(c.tx);
    row.reconcile_failures[i] = c.reports > 0 ? c.failures : null;
  }
  return {
    generated_at: now.toISOString(),
    range,
    timestamps: bucketStarts(grid).map(iso),
    nodes: [...rows.values()].sort((a, b) => (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : 0)),
  };
}

/** `GET /ui/nodes/metrics?range=`: 1h, 6h (default), 24h, 7d; cached 5 s per range. */
export function nodesMetricsRoutes(ctx: ServiceContext): ApiRouter {
  const cache = new ResponseCache<Awaited<ReturnType<typeof nodesMetrics>>>(METRICS_CACHE_MS, ctx.now);
  return new ApiRouter('/control/v1').route({
    method: 'get',
    path: '/ui/nodes/metrics',
    summary: 'metrics matrix: CPU, RSS, throughput and reconcile failures per node on one grid (5 s cache)',
    security: ADMIN,
    tags: ['console'],
    query: Type.Object(
      {
        range: Type.Union(
          METRICS_RANGES.map((r) => Type.Literal(r)),
          { default: '6h', description: '1h (5 min, 12), 6h (10 min, 36), 24h (30 min, 48), 7d (3 h, 56)' },
        ),
      },
      { additionalProperties: false },
    ),
    responses: { 200: MetricsMatrix, 422: 'invalid range' },
    handler: async (req, res) => {
      const range = req.validQuery.range;
      res.json(await cache.get(range, () => nodesMetrics(ctx, range)));
    },
  });
}
