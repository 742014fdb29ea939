import { Type } from '@sinclair/typebox';
import { fleetRouting } from '../../../commands/routing.js';
import { routingTimeline, searchRoutes } from '../../../infra/telemetry/routing.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN, NodeIdParams } from '../fleet/common.js';
import { fleetRoutingRows, latestRoutingOr404, nodeOriginsView, nodeSummaryView, originNames } from '../shared/routing-views.js';
import { FleetRow, FleetSummary, NodeOrigin, NodeSummary, Observation, Route, RpkiCounts, RpkiState } from './schemas.js';

const TAGS = ['routing'];
const NOT_FOUND = 'unknown node <id> / no routing table reported for node <id>';
const closed = { additionalProperties: false } as const;

export const PrefixQuery = Type.Object(
  {
    family: Type.Optional(Type.Union([Type.Literal('4'), Type.Literal('6')])),
    scope: Type.Union([Type.Literal('all'), Type.Literal('local'), Type.Literal('external')], { default: 'all' }),
    q: Type.Optional(
      Type.String({ maxLength: 128, description: 'case-insensitive substring of the prefix or protocol, or digits of the origin ASN (`AS` optional)' }),
    ),
    rpki: Type.Optional(RpkiState),
    path_asn: Type.Optional(Type.Integer({ minimum: 1, maximum: 4294967295, description: 'a whole hop of the AS path, origin included' })),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
    offset: Type.Integer({ minimum: 0, maximum: 2147483647, default: 0 }),
  },
  closed,
);

/** `/admin/routing/fleet` and `/admin/nodes/{node_id}/routing/*`: the routing tables the agents report, read only. */
export function routingRoutes(ctx: ServiceContext): ApiRouter {
  const r = new ApiRouter('/control/v1');
  const common = { security: ADMIN, tags: TAGS, method: 'get' as const };

  r.route({
    ...common,
    path: '/admin/routing/fleet',
    summary: "fleet routing overview: the union of every node's latest table, and one row per node (nulls before its first table)",
    responses: { 200: Type.Object({ captured_at: Type.Union([Type.String(), Type.Null()]), summary: FleetSummary, nodes: Type.Array(FleetRow) }, closed) },
    handler: async (_req, res) => {
      const [fleet, nodes] = await Promise.all([fleetRouting(ctx.pool, ctx.now()), fleetRoutingRows(ctx)]);
      res.json({ captured_at: fleet.captured_at, summary: fleet.summary, nodes });
    },
  });

  r.route({
    ...common,
    path: '/admin/nodes/{node_id}/routing/summary',
    summary: 'latest table: size per family, origin AS counts, RPKI distribution, prefix-length and AS-path-length distributions, churn',
    params: NodeIdParams,
    responses: { 200: NodeSummary, 404: NOT_FOUND },
    handler: async (req, res) => {
      res.json(nodeSummaryView(await latestRoutingOr404(ctx, req.params.node_id)));
    },
  });

  r.route({
    ...common,
    path: '/admin/nodes/{node_id}/routing/origins',
    summary: 'top origin ASNs of the latest table by distinct prefixes, with registry names (null without a replica)',
    params: NodeIdParams,
    query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 50 }) }, closed),
    responses: {
      200: Type.Object({ node_id: Type.String(), captured_at: Type.String(), origins: Type.Array(NodeOrigin) }, closed),
      404: NOT_FOUND,
      422: 'invalid limit',
    },
    handler: async (req, res) => {
      const latest = await latestRoutingOr404(ctx, req.params.node_id);
      res.json({ node_id: latest.node_id, captured_at: latest.captured_at, origins: await nodeOriginsView(ctx, latest.node_id, req.validQuery.limit) });
    },
  });

  r.route({
    ...common,
    path: '/admin/nodes/{node_id}/routing/prefixes',
    summary: 'paged search of the latest table in address order; rpki_counts ignore the rpki condition; as_names name the page origins',
    params: NodeIdParams,
    query: PrefixQuery,
    responses: {
      200: Type.Object(
        {
          node_id: Type.String(),
          captured_at: Type.String(),
          rpki_observed: Type.Boolean(),
          total: Type.Integer({ minimum: 0 }),
          limit: Type.Integer(),
          offset: Type.Integer(),
          routes: Type.Array(Route),
          rpki_counts: Type.Union([RpkiCounts, Type.Null()]),
          as_names: Type.Record(Type.String(), Type.String()),
        },
        closed,
      ),
      404: NOT_FOUND,
      422: 'invalid parameter',
    },
    handler: async (req, res) => {
      const latest = await latestRoutingOr404(ctx, req.params.node_id);
      const q = req.validQuery;
      const found = await searchRoutes(
        ctx.pool,
        latest.node_id,
        {
          family: q.family === undefined ? undefined : (Number(q.family) as 4 | 6),
          local: q.scope === 'all' ? undefined : q.scope === 'local',
          q: q.q,
          rpki: q.rpki,
          path_asn: q.path_asn,
        },
        q.limit,
        q.offset,
      );
      const names = await originNames(ctx, [...new Set(found.routes.flatMap((r) => (r.origin_asn === null ? [] : [r.origin_asn])))]);
      res.json({
        node_id: latest.node_id,
        captured_at: latest.captured_at,
        rpki_observed: latest.rpki_observed,
        total: found.total,
        limit: q.limit,
        offset: q.offset,
        routes: found.routes,
        rpki_counts: latest.rpki_observed ? found.rpki_counts : null,
        as_names: Object.fromEntries([...(names ?? [])].map(([asn, name]) => [String(asn), name])),
      });
    },
  });

  r.route({
    ...common,
    path: '/admin/nodes/{node_id}/routing/timeline',
    summary: 'the latest observations oldest first: table size per family and churn (prefixes announced and withdrawn since the previous table)',
    params: NodeIdParams,
    query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 500, default: 200 }) }, closed),
    responses: { 200: Type.Object({ node_id: Type.String(), observations: Type.Array(Observation) }, closed), 404: NOT_FOUND, 422: 'invalid limit' },
    handler: async (req, res) => {
      const latest = await latestRoutingOr404(ctx, req.params.node_id);
      res.json({ node_id: latest.node_id, observations: await routingTimeline(ctx.pool, latest.node_id, req.validQuery.limit) });
    },
  });
  return r;
}
