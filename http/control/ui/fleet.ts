import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter, component } from '../../shared/routes.js';
import { AgentSummary, Count, Geo, LinkPeering, Liveness, NullableInteger, NullableNumber, NullableString, Rates, TAGS, UNAUTHORIZED } from './schemas.js';
import { buildFleetOverview } from './views/overview.js';
import { BREAKDOWN_DEFAULTS, buildTrafficBreakdown } from '../shared/traffic-breakdown.js';

export const FleetOverviewSchema = Type.Object({
  generated_at: Type.String({ format: 'date-time' }),
  summary: Type.Object({ total: Count, ok: Count, degraded: Count, stale: Count, down: Count, unknown: Count }),
  agent_summary: AgentSummary,
  nodes: Type.Array(
    Type.Object({
      node_id: Type.String(),
      lifecycle: Type.String(),
      site: NullableString,
      region: NullableInteger,
      geo: Geo,
      health: Type.String(),
      liveness: Liveness,
      generation: Type.Integer(),
      drift_count: Count,
      agent_version: NullableString,
      last_heartbeat_at: NullableString,
      capabilities: Type.Array(Type.String()),
      adjacencies: Type.Array(Type.Object({ interface: Type.String(), node_id: Type.String(), cost: Type.Number() })),
    }),
  ),
  links: Type.Array(Type.Object({ a: Type.String(), b: Type.String() })),
});

export const TrafficBreakdownSchema = Type.Object({
  generated_at: Type.String({ format: 'date-time' }),
  totals: Type.Object(Rates),
  nodes: Type.Array(
    component(
      'TrafficBreakdownNode',
      Type.Object(
        {
          node_id: Type.String({ description: 'the node' }),
          geo: Geo,
          sampled_at: { ...NullableString, description: 'time of the latest sample; null without one' },
          interval_seconds: { ...NullableNumber, description: 'seconds between the two samples the rates come from; null with fewer than two' },
          rx_bytes_per_sec: {
            ...NullableNumber,
            description: 'current receive rate, bytes per second, summed over the WireGuard peers; null with fewer than two samples',
          },
          tx_bytes_per_sec: {
            ...NullableNumber,
            description: 'current send rate, bytes per second, summed over the WireGuard peers; null with fewer than two samples',
          },
          peer_count: { ...Count, description: 'WireGuard peers of the node' },
        },
        { description: "a node's current WireGuard rates" },
      ),
    ),
  ),
  other: Type.Object({ node_count: Count, ...Rates }, { description: 'the nodes beyond `breakdown_top`, summed' }),
  peers: Type.Array(
    Type.Object({
      node_id: Type.String(),
      geo: Geo,
      interface: Type.String(),
      public_key: NullableString,
      ...Rates,
      reset: Type.Boolean(),
      peering: LinkPeering,
    }),
  ),
  peer_total: Count,
});

/** `/ui/fleet/overview` and `/ui/fleet/traffic-breakdown`. */
export function consoleFleetRoutes(ctx: ServiceContext): ApiRouter {
  const common = { method: 'get' as const, tags: TAGS, security: ['admin'] };
  return new ApiRouter('/control/v1')
    .route({
      ...common,
      path: '/ui/fleet/overview',
      summary: 'fleet overview: health, capabilities, agent liveness, geo and physical WireGuard adjacency of every node',
      responses: { 200: FleetOverviewSchema, ...UNAUTHORIZED },
      handler: async (_req, res) => {
        res.json(await buildFleetOverview(ctx, ctx.now()));
      },
    })
    .route({
      ...common,
      path: '/ui/fleet/traffic-breakdown',
      summary: 'current WireGuard rates per node and per peer, from the latest two light samples of each node',
      query: Type.Object(
        {
          peers_limit: Type.Integer({
            minimum: 1,
            maximum: 200,
            default: BREAKDOWN_DEFAULTS.peersLimit,
            description: 'peers listed, fleet-wide, busiest first',
          }),
          breakdown_top: Type.Integer({
            minimum: 1,
            maximum: 200,
            default: BREAKDOWN_DEFAULTS.breakdownTop,
            description: 'nodes listed, busiest first; the rest are summed into `other`',
          }),
        },
        { additionalProperties: false },
      ),
      responses: { 200: TrafficBreakdownSchema, ...UNAUTHORIZED, 422: 'peers_limit or breakdown_top out of range' },
      handler: async (req, res) => {
        res.json(await buildTrafficBreakdown(ctx, ctx.now(), { peersLimit: req.validQuery.peers_limit, breakdownTop: req.validQuery.breakdown_top }));
      },
    });
}
