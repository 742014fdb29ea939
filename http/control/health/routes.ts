import { Type } from '@sinclair/typebox';
import { NotFound } from '../../../domain/errors.js';
import { deriveHealth, NODE_HEALTH_VALUES, type NodeHealth } from '../../../domain/telemetry/health.js';
import { agentStatuses, livenessOf, type AgentStatus, type Liveness } from '../../../infra/telemetry/liveness.js';
import { allNodeStatus, listStatusEvents, nodeStatus, STATUS_EVENT_KINDS, type NodeStatusRow } from '../../../infra/telemetry/store.js';
import { listNodes, type NodeOut } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN, NodeIdParams, nodeOr404 } from '../fleet/common.js';

const TAGS = ['health'];
const iso = (t: Date | null | undefined) => (t ? t.toISOString() : null);

/** One node's health line: derived health now, its reasons, agent liveness and the counters behind them. */
export function healthLine(node: NodeOut, status: NodeStatusRow | undefined, agent: AgentStatus | undefined, now: Date) {
  const verdict = status ? deriveHealth(status, now) : { health: 'unknown' as NodeHealth, reasons: [] };
  return {
    node_id: node.node_id,
    lifecycle: node.lifecycle,
    health: verdict.health,
    reasons: verdict.reasons,
    liveness: livenessOf(agent?.last_seen ?? null, now),
    last_heartbeat_at: iso(agent?.last_seen),
    agent_version: agent?.agent_version ?? null,
    applied_generation: agent?.applied_generation ?? null,
    current_generation: node.current_generation,
    snapshot_at: iso(status?.snapshot_received_at),
    bgp_established: status?.snapshot_received_at ? status.bgp_established : null,
    bgp_total: status?.snapshot_received_at ? status.bgp_total : null,
    last_apply_status: status?.last_apply_status ?? null,
    last_report_status: status?.last_report_status ?? null,
  };
}

/** The latest snapshot, reconciliation report and apply result of a node, each with the time it arrived, or null. */
export function latestReports(status: NodeStatusRow | undefined) {
  return {
    snapshot: status?.snapshot ? { received_at: iso(status.snapshot_received_at), ...status.snapshot } : null,
    report: status?.report ? { received_at: iso(status.report_received_at), ...status.report } : null,
    apply: status?.apply ? { received_at: iso(status.apply_received_at), ...status.apply } : null,
  };
}

const HealthValue = Type.Union(NODE_HEALTH_VALUES.map((h) => Type.Literal(h)));
export const HealthLine = Type.Object({
  node_id: Type.String(),
  lifecycle: Type.String(),
  health: HealthValue,
  reasons: Type.Array(Type.String()),
  liveness: Type.Union([Type.Literal('online'), Type.Literal('stale'), Type.Literal('offline')]),
  last_heartbeat_at: Type.Union([Type.String(), Type.Null()]),
  agent_version: Type.Union([Type.String(), Type.Null()]),
  applied_generation: Type.Union([Type.Integer(), Type.Null()]),
  current_generation: Type.Integer(),
  snapshot_at: Type.Union([Type.String(), Type.Null()]),
  bgp_established: Type.Union([Type.Integer(), Type.Null()]),
  bgp_total: Type.Union([Type.Integer(), Type.Null()]),
  last_apply_status: Type.Union([Type.String(), Type.Null()]),
  last_report_status: Type.Union([Type.String(), Type.Null()]),
});
const Count = Type.Integer({ minimum: 0 });
const Summary = Type.Object({
  total: Count,
  ok: Count,
  degraded: Count,
  stale: Count,
  down: Count,
  unknown: Count,
  agents: Type.Object({ online: Count, stale: Count, offline: Count }),
});

/** Every node's health line, derived now (`/admin/health`; the control service's `dn42_nodes` gauge counts them). */
export async function fleetHealth(ctx: Pick<ServiceContext, 'pool' | 'now'>): Promise<ReturnType<typeof healthLine>[]> {
  const now = ctx.now();
  const [nodes, status, agents] = await Promise.all([listNodes(ctx.pool), allNodeStatus(ctx.pool), agentStatuses(ctx.pool)]);
  const agentOf = new Map(agents.map((a) => [a.node_id, a]));
  return nodes.map((n) => healthLine(n, status.get(n.node_id), agentOf.get(n.node_id), now));
}

/** `/admin/health`, `/admin/nodes/{id}/health`, `/admin/nodes/{id}/status-events`. */
export function healthRoutes(ctx: ServiceContext): ApiRouter {
  const r = new ApiRouter('/control/v1');
  const common = { security: ADMIN, tags: TAGS, method: 'get' as const };

  r.route({
    ...common,
    path: '/admin/health',
    summary: 'health of every node (derived now) with agent liveness, and counts',
    responses: { 200: Type.Object({ summary: Summary, nodes: Type.Array(HealthLine) }) },
    handler: async (_req, res) => {
      const lines = await fleetHealth(ctx);
      const count = <K extends string>(values: readonly K[], of: (l: (typeof lines)[number]) => K) =>
        Object.fromEntries(values.map((v) => [v, lines.filter((l) => of(l) === v).length])) as Record<K, number>;
      const summary = {
        total: lines.length,
        ...count(NODE_HEALTH_VALUES, (l) => l.health),
        agents: count<Liveness>(['online', 'stale', 'offline'], (l) => l.liveness),
      };
      res.json({ summary, nodes: lines });
    },
  });

  r.route({
    ...common,
    path: '/admin/nodes/{node_id}/health',
    summary: 'one node: health plus its latest snapshot, reconciliation report and apply result; no report yet: 404',
    params: NodeIdParams,
    responses: {
      200: Type.Intersect([HealthLine, Type.Object({ snapshot: Type.Unknown(), report: Type.Unknown(), apply: Type.Unknown() })]),
      404: 'unknown node <id> / no report for node <id>',
    },
    handler: async (req, res) => {
      const node = await nodeOr404(ctx, req.params.node_id);
      const status = await nodeStatus(ctx.pool, node.node_id);
      if (!status || (!status.snapshot && !status.report && !status.apply)) throw new NotFound(`no report for node ${node.node_id}`);
      const [agent] = await agentStatuses(ctx.pool, [node.node_id]);
      res.json({ ...healthLine(node, status, agent, ctx.now()), ...latestReports(status) });
    },
  });

  r.route({
    ...common,
    path: '/admin/nodes/{node_id}/status-events',
    summary: 'status events (one per report) newest first',
    params: NodeIdParams,
    query: Type.Object(
      {
        kind: Type.Optional(Type.Union(STATUS_EVENT_KINDS.map((k) => Type.Literal(k)))),
        limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
      },
      { additionalProperties: false },
    ),
    responses: {
      200: Type.Object({
        node_id: Type.String(),
        events: Type.Array(
          Type.Object({
            id: Type.Integer(),
            kind: Type.String(),
            generation: Type.Union([Type.Integer(), Type.Null()]),
            status: Type.Union([Type.String(), Type.Null()]),
            drift_count: Type.Union([Type.Integer(), Type.Null()]),
            created_at: Type.String(),
            payload: Type.Unknown(),
          }),
        ),
      }),
      404: 'unknown node <id>',
      422: 'invalid kind or limit',
    },
    handler: async (req, res) => {
      const node = await nodeOr404(ctx, req.params.node_id);
      res.json({ node_id: node.node_id, events: await listStatusEvents(ctx.pool, node.node_id, req.validQuery.kind, req.validQuery.limit) });
    },
  });
  return r;
}
