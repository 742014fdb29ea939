import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN } from '../fleet/common.js';
import { PeeringIssues } from './flaps/routes.js';
import { peeringIssues } from './flaps/sessions.js';
import { ResponseCache } from './response-cache.js';
import { CompareParam, TrafficRangeParam, trafficGrids } from './series-params.js';
import { TrafficByAs, trafficByAs, TrafficMix } from './traffic-by-as.js';
import { TrafficTrend, trafficTrend } from './traffic-trend.js';
import { buildFleetOverview } from './views/overview.js';
import { BREAKDOWN_DEFAULTS, buildTrafficBreakdown } from '../shared/traffic-breakdown.js';
import { fleetRoutingBlock } from '../shared/routing-views.js';

/** Document 3, Limits: dashboard response cache, per full URL. */
export const DASHBOARD_CACHE_MS = 3000;

const Limit = (description: string, fallback: number) => Type.Integer({ minimum: 1, maximum: 200, default: fallback, description });
const DashboardQuery = Type.Object(
  {
    range: Type.Optional(TrafficRangeParam),
    compare: Type.Optional(CompareParam),
    origins_top: Limit('routing.origins rows (as /ui/routing/fleet-overview)', 100),
    origins_sort: Type.Union([Type.Literal('count'), Type.Literal('v4'), Type.Literal('v6')], { default: 'count' }),
    traffic_limit: Limit("traffic_breakdown peers (the breakdown endpoint's peers_limit)", BREAKDOWN_DEFAULTS.peersLimit),
    breakdown_top: Limit('traffic_breakdown nodes listed; the rest summed into other', BREAKDOWN_DEFAULTS.breakdownTop),
    as_traffic: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '0', description: '1 fills traffic_by_as and traffic_mix (null otherwise)' }),
  },
  { additionalProperties: false },
);
type DashboardQuery = typeof DashboardQuery.static;

const Block = (description: string) => Type.Unknown({ description });
const Dashboard = Type.Object({
  generated_at: Type.String(),
  overview: Block('as GET /ui/fleet/overview'),
  traffic: TrafficTrend,
  traffic_breakdown: Block('as GET /ui/fleet/traffic-breakdown'),
  traffic_by_as: Type.Union([TrafficByAs, Type.Null()]),
  traffic_mix: Type.Union([TrafficMix, Type.Null()]),
  peering_issues: PeeringIssues,
  routing: Block('as the routing block of GET /ui/routing/fleet-overview'),
});

/** The first screen in one answer; each block is built by the builder of its own endpoint, at one `now`. */
export async function buildDashboard(ctx: ServiceContext, q: DashboardQuery) {
  const now = ctx.now();
  const { grid } = trafficGrids(q, now);
  const [overview, traffic, breakdown, byAs, routing, issues] = await Promise.all([
    buildFleetOverview(ctx, now),
    trafficTrend(ctx.pool, q, now, null),
    buildTrafficBreakdown(ctx, now, { peersLimit: q.traffic_limit, breakdownTop: q.breakdown_top }),
    q.as_traffic === '1' ? trafficByAs(ctx, grid) : null,
    fleetRoutingBlock(ctx, { range: q.range ?? '24h', origins_top: q.origins_top, origins_sort: q.origins_sort }),
    peeringIssues(ctx.pool, now),
  ]);
  return {
    generated_at: now.toISOString(),
    overview,
    traffic,
    traffic_breakdown: breakdown,
    traffic_by_as: byAs?.traffic_by_as ?? null,
    traffic_mix: byAs?.traffic_mix ?? null,
    peering_issues: issues,
    routing,
  };
}

/** `GET /ui/dashboard`: cached 3 s per full URL (query included); `generated_at` says when it was built. */
export function dashboardRoutes(ctx: ServiceContext): ApiRouter {
  const cache = new ResponseCache<Awaited<ReturnType<typeof buildDashboard>>>(DASHBOARD_CACHE_MS, ctx.now);
  return new ApiRouter('/control/v1').route({
    method: 'get',
    path: '/ui/dashboard',
    summary: 'first-screen bundle: overview, traffic, breakdown, traffic by AS and mix, peering issues, routing (3 s cache per URL)',
    security: ADMIN,
    tags: ['console'],
    query: DashboardQuery,
    responses: { 200: Dashboard, 422: 'invalid parameter' },
    handler: async (req, res) => {
      res.json(await cache.get(req.originalUrl, () => buildDashboard(ctx, req.validQuery)));
    },
  });
}
