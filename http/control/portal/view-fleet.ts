import { isActive } from '../../../domain/public/facts.js';
import { buildFleetOverview } from '../../../domain/public/fleet-overview.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { NodeIdParams, nodeOr404 } from '../fleet/common.js';
import { loadFleetFacts } from '../public/facts.js';
import { DASHBOARD_CACHE_MS } from '../ui/dashboard.js';
import { ResponseCache } from '../ui/response-cache.js';
import { trafficGrids } from '../ui/series-params.js';
import { trafficByAs } from '../ui/traffic-by-as.js';
import { trafficTrend } from '../ui/traffic-trend.js';
import { fleetRoutingBlock } from '../shared/routing-views.js';
import { buildTrafficBreakdown } from '../shared/traffic-breakdown.js';
import { portalOverview, portalRouting, portalTrafficBreakdown, portalTrafficByAs, portalTrafficMix, portalTrafficTrend } from './allow-lists.js';
import { PORTAL_UNAUTHORIZED } from './auth.js';
import { PORTAL_SECURITY, PORTAL_TAGS } from './schemas.js';
import {
  PortalBreakdownQuery,
  PortalDashboard,
  PortalDashboardQuery,
  PortalNodeTraffic,
  PortalTrafficBreakdown,
  PortalTrafficTrend,
  PortalTrendQuery,
} from './view-schemas.js';

type DashboardQuery = typeof PortalDashboardQuery.static;

/** The console's fleet overview of the active nodes (as `/public/fleet` shows them), before the allow-list. */
async function activeOverview(ctx: ServiceContext, now: Date) {
  const { facts, targetVersion } = await loadFleetFacts(ctx.pool, now);
  return buildFleetOverview(facts.filter(isActive), { generatedAt: now, targetVersion });
}

/** `/autopeering/fleet/dashboard`: overview, traffic and routing from the console's block builders, at one `now`, each through its allow-list. */
async function portalDashboard(ctx: ServiceContext, q: DashboardQuery) {
  const now = ctx.now();
  const { grid } = trafficGrids(q, now);
  const [overview, traffic, byAs, routing] = await Promise.all([
    activeOverview(ctx, now),
    trafficTrend(ctx.pool, q, now, null),
    q.as_traffic === '1' ? trafficByAs(ctx, grid) : null,
    fleetRoutingBlock(ctx, { range: q.range, origins_top: q.origins_top, origins_sort: 'count' }),
  ]);
  return {
    generated_at: now.toISOString(),
    overview: portalOverview(overview),
    traffic: portalTrafficTrend(traffic),
    traffic_by_as: portalTrafficByAs(byAs?.traffic_by_as ?? null),
    traffic_mix: portalTrafficMix(byAs?.traffic_mix ?? null),
    routing: portalRouting(routing),
  };
}

/** The portal's fleet and traffic views (document 3, "Read-only network view"). */
export function portalFleetViewRoutes(ctx: ServiceContext): ApiRouter {
  const cache = new ResponseCache<Awaited<ReturnType<typeof portalDashboard>>>(DASHBOARD_CACHE_MS, ctx.now);
  const common = { method: 'get' as const, tags: PORTAL_TAGS, security: PORTAL_SECURITY };
  return new ApiRouter('/control/v1')
    .route({
      ...common,
      path: '/autopeering/fleet/dashboard',
      summary: 'overview (node rows: node_id, health, site, region, geo, capabilities), fleet traffic and routing in one call (3 s cache per URL)',
      query: PortalDashboardQuery,
      responses: { 200: PortalDashboard, ...PORTAL_UNAUTHORIZED, 422: 'invalid range (6h or 24h), compare, origins_top or as_traffic' },
      handler: async (req, res) => {
        res.json(await cache.get(req.originalUrl, () => portalDashboard(ctx, req.validQuery)));
      },
    })
    .route({
      ...common,
      path: '/autopeering/fleet/traffic',
      summary: 'fleet throughput summed per time bucket, bytes per second; range 6h or 24h only',
      query: PortalTrendQuery,
      responses: { 200: PortalTrafficTrend, ...PORTAL_UNAUTHORIZED, 422: 'invalid range (6h or 24h) or compare' },
      handler: async (req, res) => {
        res.json(portalTrafficTrend(await trafficTrend(ctx.pool, req.validQuery, ctx.now(), null)));
      },
    })
    .route({
      ...common,
      path: '/autopeering/nodes/{node_id}/traffic',
      summary: "a node's throughput in bytes per second (sum over its WireGuard interfaces); range 6h or 24h only",
      params: NodeIdParams,
      query: PortalTrendQuery,
      responses: { 200: PortalNodeTraffic, ...PORTAL_UNAUTHORIZED, 404: 'unknown node <id>', 422: 'invalid range (6h or 24h) or compare' },
      handler: async (req, res) => {
        const node = await nodeOr404(ctx, req.params.node_id);
        res.json({ node_id: node.node_id, ...portalTrafficTrend(await trafficTrend(ctx.pool, req.validQuery, ctx.now(), [node.node_id])) });
      },
    })
    .route({
      ...common,
      path: '/autopeering/fleet/traffic-breakdown',
      summary: 'current WireGuard rates per node and per peer; peers keep only node_id, interface and the rates (no public key, no endpoint)',
      query: PortalBreakdownQuery,
      responses: { 200: PortalTrafficBreakdown, ...PORTAL_UNAUTHORIZED, 422: 'top out of range (1 to 200)' },
      handler: async (req, res) => {
        const top = req.validQuery.top;
        res.json(portalTrafficBreakdown(await buildTrafficBreakdown(ctx, ctx.now(), { peersLimit: top, breakdownTop: top })));
      },
    });
}
