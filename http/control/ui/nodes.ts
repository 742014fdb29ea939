import { Type } from '@sinclair/typebox';
import { NotFound } from '../../../domain/errors.js';
import { nodeStatus } from '../../../infra/telemetry/store.js';
import { interfacePeerings } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter, component } from '../../shared/routes.js';
import { NodeIdParams, nodeOr404 } from '../fleet/common.js';
import { NodeOutSchema } from '../fleet/schemas.js';
import { HealthLine } from '../health/routes.js';
import { Count, Geo, LinkPeering, Liveness, Nullable, NullableInteger, NullableNumber, NullableString, TAGS, UNAUTHORIZED } from './schemas.js';
import { linksOf } from './views/links.js';
import { nodeList, nodeOverview } from './views/nodes.js';

const NodeRow = component(
  'NodeRow',
  Type.Composite(
    [
      Type.Omit(NodeOutSchema, ['base_template', 'inventory']),
      Type.Object({
        health: Type.String({ description: 'node health: `ok`, `degraded`, `stale`, `down` or `unknown` (never reported)' }),
        liveness: Liveness,
        agent_version: Nullable(Type.String(), 'the agent version the node reports; null when not reported'),
        agent_up_to_date: Nullable(Type.Boolean(), 'false when the agent is older than the target version; null when either is unknown'),
        last_heartbeat_at: Nullable(Type.String(), 'the latest agent heartbeat; null without one'),
        drift_count: { ...Count, description: 'drift items the agent reported; 0 when unreported' },
        peers_up: Nullable(Type.Integer(), 'BGP sessions established; null without snapshot'),
        peers_total: Nullable(Type.Integer(), 'BGP sessions; null without snapshot'),
        rx_bytes_per_sec: Nullable(Type.Number(), 'current WireGuard receive rate in bytes per second; null without data'),
        tx_bytes_per_sec: Nullable(Type.Number(), 'current WireGuard send rate in bytes per second; null without data'),
        geo: Geo,
      }),
    ],
    { description: 'the node record without base_template and inventory, plus health, liveness, agent, drift, session counts, rates and geo' },
  ),
);

const DriftItem = Type.Object({ kind: Type.String(), name: Type.String(), detail: NullableString });

const Point = (props: Parameters<typeof Type.Object>[0]) => Type.Object({ at: Type.String({ format: 'date-time' }), ...props });
const SelfMetricsPoint = Point({
  cpu_percent: Type.Number(),
  rss_mb: Type.Number(),
  last_routing_collect_seconds: NullableNumber,
  last_reresolve_seconds: NullableNumber,
});
const Trends = Type.Object({
  self_metrics: Type.Object({ current: Nullable(SelfMetricsPoint), series: Type.Array(SelfMetricsPoint) }),
  drift: Type.Object({ current: NullableInteger, series: Type.Array(Point({ count: Count })) }),
  apply: Type.Object({
    total: Count,
    succeeded: Count,
    last_status: NullableString,
    last_at: NullableString,
    series: Type.Array(Point({ status: Type.String() })),
  }),
});
const NodeOverview = Type.Intersect([
  HealthLine,
  Type.Object({
    agent_up_to_date: Nullable(Type.Boolean()),
    drift_count: Count,
    snapshot: Type.Unknown(),
    report: Nullable(
      Type.Object(
        { received_at: Type.String({ format: 'date-time' }), status: Type.Optional(Type.String()), drift_items: Type.Optional(Type.Array(DriftItem)) },
        { description: 'the latest reconciliation report as the agent sent it, with when it arrived' },
      ),
    ),
    apply: Nullable(
      Type.Object(
        {
          received_at: Type.String({ format: 'date-time' }),
          generation: Type.Optional(Type.Integer()),
          status: Type.Optional(Type.String()),
          error: Type.Optional(NullableString),
        },
        { description: 'the latest apply result as the agent sent it, with when it arrived' },
      ),
    ),
    node: NodeOutSchema,
    dns_group: Nullable(Type.Object({ id: Type.Integer(), name: Type.String() })),
    trends: Trends,
    geo: Geo,
  }),
]);

const Links = Type.Object({
  node_id: Type.String(),
  captured_at: Type.String(),
  received_at: Type.String(),
  thresholds: Type.Object({ up_seconds: Type.Integer(), stale_seconds: Type.Integer() }),
  summary: Type.Object({ up: Count, stale: Count, down: Count }),
  links: Type.Array(
    component(
      'NodeLink',
      Type.Object({
        interface: Type.String({ description: 'the WireGuard interface' }),
        peer_public_key: { ...NullableString, description: 'the peer of the interface; null for an interface without a peer (then down)' },
        endpoint: { ...NullableString, description: "the peer's endpoint as WireGuard reports it" },
        latest_handshake_at: { ...NullableString, description: 'the latest handshake; null without one' },
        handshake_age_seconds: { ...NullableInteger, description: "seconds since the handshake at the server's clock; null without one" },
        state: Type.Union([Type.Literal('up'), Type.Literal('stale'), Type.Literal('down')], { description: 'by handshake freshness (the thresholds)' }),
        rx_bytes: { ...NullableInteger, description: 'bytes received' },
        tx_bytes: { ...NullableInteger, description: 'bytes sent' },
        peering: { ...LinkPeering, description: 'the peering of the interface; null when none is known' },
      }),
    ),
  ),
});

/** `/ui/nodes`, `/ui/nodes/{node_id}/overview`, `/ui/nodes/{node_id}/links`. */
export function consoleNodeRoutes(ctx: ServiceContext): ApiRouter {
  const common = { method: 'get' as const, tags: TAGS, security: ['admin'] };
  return new ApiRouter('/control/v1')
    .route({
      ...common,
      path: '/ui/nodes',
      summary: 'node list: node fields with health, liveness, agent, drift, BGP session counts, current WireGuard rates and geo',
      responses: { 200: Type.Array(NodeRow), ...UNAUTHORIZED },
      handler: async (_req, res) => {
        res.json(await nodeList(ctx, ctx.now()));
      },
    })
    .route({
      ...common,
      path: '/ui/nodes/{node_id}/overview',
      summary:
        'node page bundle: health line and latest reports, the full node, DNS group, trends (last 24 h), liveness and geo; never reported: the unknown skeleton',
      params: NodeIdParams,
      responses: { 200: NodeOverview, ...UNAUTHORIZED, 404: 'unknown node <id>' },
      handler: async (req, res) => {
        const node = await nodeOr404(ctx, req.params.node_id);
        res.json(await nodeOverview(ctx, node, ctx.now()));
      },
    })
    .route({
      ...common,
      path: '/ui/nodes/{node_id}/links',
      summary: 'WireGuard link state (up, stale, down) by handshake freshness, from the latest runtime snapshot',
      params: NodeIdParams,
      responses: { 200: Links, ...UNAUTHORIZED, 404: 'unknown node <id> / no runtime status reported for node <id>' },
      handler: async (req, res) => {
        const node = await nodeOr404(ctx, req.params.node_id);
        const [status, peerings] = await Promise.all([nodeStatus(ctx.pool, node.node_id), interfacePeerings(ctx.pool, node.node_id)]);
        if (!status?.snapshot || !status.snapshot_received_at) throw new NotFound(`no runtime status reported for node ${node.node_id}`);
        res.json({
          node_id: node.node_id,
          captured_at: new Date(status.snapshot.captured_at).toISOString(),
          received_at: status.snapshot_received_at.toISOString(),
          ...linksOf(status.snapshot, peerings.get(node.node_id) ?? new Map(), ctx.now()),
        });
      },
    });
}
