import { Type, type TSchema } from '@sinclair/typebox';
import type { RequestHandler, Response } from 'express';
import {
  recordApply,
  recordPrefixFlaps,
  recordReconciliation,
  recordReresolve,
  recordSnapshot,
  recordWireguardTraffic,
  type TelemetryDeps,
} from '../../../commands/telemetry.js';
import { recordRoutingTable } from '../../../commands/routing.js';
import {
  ApplyResultSchema,
  PrefixFlapsSchema,
  ReconciliationReportSchema,
  RoutingTableSchema,
  RuntimeSnapshotSchema,
  WireguardReresolveSchema,
  WireguardTrafficSchema,
} from '../../../domain/telemetry/reports.js';
import type { LargeJsonRoute } from '../../shared/app.js';
import type { ServiceContext } from '../../shared/context.js';
import { HttpError } from '../../shared/errors.js';
import { requestMetadata } from '../../shared/metadata.js';
import { ApiRouter } from '../../shared/routes.js';
import { requireAgent, type AgentPrincipal } from './auth.js';

export const AGENT = ['agent'];
export const AGENT_TAGS = ['node agent'];

/**
 * The node the request speaks for must be the token's node (403 otherwise).
 * `requireAgent` has run before: the principal is in `res.locals.agent`.
 */
export function checkAgentNode(res: Response, nodeId: string): AgentPrincipal {
  const agent = res.locals.agent as AgentPrincipal;
  if (agent.node_id !== nodeId) throw new HttpError(403, `agent token is not bound to node ${nodeId}`);
  return agent;
}

/** A router for agent routes: `requireAgent` runs on exactly these paths (before validation, so 401 comes first). */
export function agentRouter(ctx: ServiceContext, paths: readonly string[]): ApiRouter {
  const r = new ApiRouter('/control/v1');
  r.router.use([...paths], requireAgent(ctx), bodyNodeFirst);
  return r;
}

/**
 * The contract's order for agent bodies: token (401), then the body's node against
 * the token's (403), and only then the full validation (422), so a token holder
 * cannot make the server validate bodies for another node.
 */
const bodyNodeFirst: RequestHandler = (req, res, next) => {
  const nodeId = (req.body as { node_id?: unknown } | undefined)?.node_id;
  if (req.method !== 'GET' && typeof nodeId === 'string') {
    try {
      checkAgentNode(res, nodeId);
    } catch (err) {
      return next(err);
    }
  }
  next();
};

export function telemetryDeps(ctx: ServiceContext): TelemetryDeps {
  return { pool: ctx.pool, store: ctx.store, log: ctx.log, background: ctx.background };
}

const Accepted = <P extends Record<string, TSchema>>(props: P) =>
  Type.Object({ accepted: Type.Literal(true), node_id: Type.String(), ...props }, { additionalProperties: false });
const N = Type.Integer({ minimum: 0 });
const FORBIDDEN = { 401: 'missing, wrong, expired or revoked agent token', 403: 'node_id is not the token node', 422: 'invalid body' };

const PATHS = {
  snapshot: '/agent/runtime-snapshot',
  routing: '/agent/routing-table',
  flaps: '/agent/prefix-flaps',
  traffic: '/agent/wireguard-traffic',
  reresolve: '/agent/wireguard-reresolve',
  report: '/agent/reconciliation-report',
  apply: '/agent/apply-result',
};

/**
 * Body limit of `POST /agent/routing-table`: the schema allows 20,000 routes, a
 * realistic route is about 150 to 200 bytes of JSON, so a full table is 3 to 4 MB;
 * 8 MiB leaves room. Other routes keep the 2 MiB default.
 */
export const ROUTING_TABLE_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** The routing table's own body parser, behind the agent token so that no anonymous body of that size is parsed. */
export function routingTableBody(ctx: ServiceContext): LargeJsonRoute {
  return { path: `/control/v1${PATHS.routing}`, limitBytes: ROUTING_TABLE_BODY_LIMIT_BYTES, before: [requireAgent(ctx)] };
}

/** `POST /agent/*` reports: runtime snapshot, routing table, prefix flaps, traffic, re-resolution, reconciliation, apply result. */
export function agentReportRoutes(ctx: ServiceContext): ApiRouter {
  const deps = telemetryDeps(ctx);
  const r = agentRouter(ctx, Object.values(PATHS));
  const common = { security: AGENT, tags: AGENT_TAGS, method: 'post' as const };

  r.route({
    ...common,
    path: PATHS.snapshot,
    summary: 'runtime observation; answered once the health write (status and transition) commits, archives follow',
    body: RuntimeSnapshotSchema,
    responses: { 200: Accepted({ generation: Type.Union([N, Type.Null()]), containers: N, interfaces: N }), ...FORBIDDEN },
    handler: async (req, res) => {
      const s = req.body;
      checkAgentNode(res, s.node_id);
      await recordSnapshot(deps, s, requestMetadata(req, res, ctx.now()), ctx.now());
      res.json({ accepted: true, node_id: s.node_id, generation: s.generation ?? null, containers: s.containers.length, interfaces: s.interfaces.length });
    },
  });
  r.route({
    ...common,
    path: PATHS.routing,
    summary: 'routing table observation; the latest replaces the previous table, a summary row is kept for trends',
    body: RoutingTableSchema,
    responses: { 200: Accepted({ observation: Type.Integer({ description: 'id of the stored observation' }), routes: N }), ...FORBIDDEN },
    handler: async (req, res) => {
      checkAgentNode(res, req.body.node_id);
      const observation = await recordRoutingTable(deps, req.body, ctx.now());
      res.json({ accepted: true, node_id: req.body.node_id, observation, routes: req.body.routes.length });
    },
  });
  r.route({
    ...common,
    path: PATHS.flaps,
    summary: "prefix flap scores; replaces the node's table",
    body: PrefixFlapsSchema,
    responses: { 200: Accepted({ entries: N, feed_state: Type.String() }), ...FORBIDDEN },
    handler: async (req, res) => {
      checkAgentNode(res, req.body.node_id);
      const entries = await recordPrefixFlaps(deps, req.body, ctx.now());
      res.json({ accepted: true, node_id: req.body.node_id, entries, feed_state: req.body.feed_state });
    },
  });
  r.route({
    ...common,
    path: PATHS.traffic,
    summary: '30 s light traffic sample; the response sums all peers (cumulative bytes)',
    body: WireguardTrafficSchema,
    responses: { 200: Accepted({ rx_bytes: N, tx_bytes: N, peer_count: N }), ...FORBIDDEN },
    handler: async (req, res) => {
      checkAgentNode(res, req.body.node_id);
      const totals = await recordWireguardTraffic(deps, req.body, ctx.now());
      res.json({ accepted: true, node_id: req.body.node_id, ...totals });
    },
  });
  r.route({
    ...common,
    path: PATHS.reresolve,
    summary: 'endpoint re-resolution result (status event kind reresolve)',
    body: WireguardReresolveSchema,
    responses: { 200: Accepted({ checked: N, reresolved: N }), ...FORBIDDEN },
    handler: async (req, res) => {
      checkAgentNode(res, req.body.node_id);
      const outcome = await recordReresolve(deps, req.body, ctx.now());
      res.json({ accepted: true, node_id: req.body.node_id, ...outcome });
    },
  });
  r.route({
    ...common,
    path: PATHS.report,
    summary: 'reconcile report (status event kind report); may change the node health',
    body: ReconciliationReportSchema,
    responses: { 200: Accepted({ status: Type.String(), drift_items: N }), ...FORBIDDEN },
    handler: async (req, res) => {
      checkAgentNode(res, req.body.node_id);
      await recordReconciliation(deps, req.body, requestMetadata(req, res, ctx.now()), ctx.now());
      res.json({ accepted: true, node_id: req.body.node_id, status: req.body.status, drift_items: req.body.drift_items.length });
    },
  });
  r.route({
    ...common,
    path: PATHS.apply,
    summary: 'apply result (status event kind apply); may change the node health',
    body: ApplyResultSchema,
    responses: { 200: Accepted({ generation: N, status: Type.String() }), ...FORBIDDEN },
    handler: async (req, res) => {
      checkAgentNode(res, req.body.node_id);
      await recordApply(deps, req.body, requestMetadata(req, res, ctx.now()), ctx.now());
      res.json({ accepted: true, node_id: req.body.node_id, generation: req.body.generation, status: req.body.status });
    },
  });
  return r;
}
