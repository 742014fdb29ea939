import { Type, type TSchema } from '@sinclair/typebox';
import {
  recordApply,
  recordPrefixFlaps,
  recordReconciliation,
  recordReresolve,
  NodeQueue,
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
import { MiB } from '../../shared/body-limit.js';
import type { ServiceContext } from '../../shared/context.js';
import { requestMetadata } from '../../shared/metadata.js';
import type { ApiRouter } from '../../shared/routes.js';
import { AGENT, AGENT_TAGS, agentNode, agentRouter } from './router.js';

export function telemetryDeps(ctx: ServiceContext): TelemetryDeps {
  return {
    pool: ctx.pool,
    store: ctx.store,
    log: ctx.log,
    background: ctx.background,
    snapshotOrder: new NodeQueue(),
    notifyFloodLimit: ctx.config.notifyFloodLimit,
  };
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

/** The report paths (under `/control/v1`): the control app answers them in front of its common stack (`createControlApp`). */
export const AGENT_REPORT_PATHS: readonly string[] = Object.values(PATHS);

/**
 * Body limits of the reports, from the schemas' list and string caps (JSON keys and
 * punctuation included), then about twice that:
 * - routing table: 20,000 routes; a realistic route is 150 to 200 bytes, so a full
 *   table is 3 to 4 MB;
 * - runtime snapshot: 4,096 WireGuard peers of up to ~450 bytes (a 256-character
 *   endpoint), 2,048 BGP protocols of up to ~550 bytes (128-character name,
 *   256-character info), 1,024 interfaces, 256 containers: about 3.6 MB at every cap;
 * - WireGuard traffic: 4,096 peers of up to ~270 bytes, 1.1 MB;
 * - re-resolve: 1,024 interfaces of up to ~2.6 KB (a 2,000-character error), 2.7 MB;
 * - reconciliation: 1,000 drift items of up to ~2.3 KB (2,000-character detail), 2.3 MB;
 * - apply result: 200 steps of up to ~2.2 KB, 0.45 MB;
 * - prefix flaps: 1,000 entries of up to ~1 KB (an AS path of 64 ASNs), 1 MB.
 */
export const REPORT_BODY_LIMITS = {
  routing: 8 * MiB,
  snapshot: 8 * MiB,
  traffic: 2 * MiB,
  reresolve: 4 * MiB,
  report: 4 * MiB,
  apply: 1 * MiB,
  flaps: 2 * MiB,
} as const satisfies Record<keyof typeof PATHS, number>;

/** Body limit of `POST /agent/routing-table`, the largest body of the control server. */
export const ROUTING_TABLE_BODY_LIMIT_BYTES = REPORT_BODY_LIMITS.routing;

/** `POST /agent/*` reports: runtime snapshot, routing table, prefix flaps, traffic, re-resolution, reconciliation, apply result. */
export function agentReportRoutes(ctx: ServiceContext): ApiRouter {
  const deps = telemetryDeps(ctx);
  const r = agentRouter(ctx, Object.values(PATHS), 'body');
  const common = { security: AGENT, tags: AGENT_TAGS, method: 'post' as const };

  r.route({
    ...common,
    path: PATHS.snapshot,
    bodyLimit: REPORT_BODY_LIMITS.snapshot,
    summary: 'runtime observation; answered once the health write (status and transition) commits, archives follow',
    body: RuntimeSnapshotSchema,
    responses: { 200: Accepted({ generation: Type.Union([N, Type.Null()]), containers: N, interfaces: N }), ...FORBIDDEN },
    handler: async (req, res) => {
      const s = req.body;
      await recordSnapshot(deps, s, requestMetadata(req, res, ctx.now()), ctx.now());
      res.json({ accepted: true, node_id: agentNode(res), generation: s.generation ?? null, containers: s.containers.length, interfaces: s.interfaces.length });
    },
  });
  r.route({
    ...common,
    path: PATHS.routing,
    bodyLimit: REPORT_BODY_LIMITS.routing,
    summary: 'routing table observation; the latest replaces the previous table, a summary row is kept for trends',
    body: RoutingTableSchema,
    responses: { 200: Accepted({ observation: Type.Integer({ description: 'id of the stored observation' }), routes: N }), ...FORBIDDEN },
    handler: async (req, res) => {
      const observation = await recordRoutingTable(deps, req.body, ctx.now());
      res.json({ accepted: true, node_id: agentNode(res), observation, routes: req.body.routes.length });
    },
  });
  r.route({
    ...common,
    path: PATHS.flaps,
    bodyLimit: REPORT_BODY_LIMITS.flaps,
    summary: "prefix flap scores; replaces the node's table",
    body: PrefixFlapsSchema,
    responses: { 200: Accepted({ entries: N, feed_state: Type.String() }), ...FORBIDDEN },
    handler: async (req, res) => {
      const entries = await recordPrefixFlaps(deps, req.body, ctx.now());
      res.json({ accepted: true, node_id: agentNode(res), entries, feed_state: req.body.feed_state });
    },
  });
  r.route({
    ...common,
    path: PATHS.traffic,
    bodyLimit: REPORT_BODY_LIMITS.traffic,
    summary: '30 s light traffic sample; the response sums all peers (cumulative bytes)',
    body: WireguardTrafficSchema,
    responses: { 200: Accepted({ rx_bytes: N, tx_bytes: N, peer_count: N }), ...FORBIDDEN },
    handler: async (req, res) => {
      const totals = await recordWireguardTraffic(deps, req.body, ctx.now());
      res.json({ accepted: true, node_id: agentNode(res), ...totals });
    },
  });
  r.route({
    ...common,
    path: PATHS.reresolve,
    bodyLimit: REPORT_BODY_LIMITS.reresolve,
    summary: 'endpoint re-resolution result (status event kind reresolve)',
    body: WireguardReresolveSchema,
    responses: { 200: Accepted({ checked: N, reresolved: N }), ...FORBIDDEN },
    handler: async (req, res) => {
      const outcome = await recordReresolve(deps, req.body, ctx.now());
      res.json({ accepted: true, node_id: agentNode(res), ...outcome });
    },
  });
  r.route({
    ...common,
    path: PATHS.report,
    bodyLimit: REPORT_BODY_LIMITS.report,
    summary: 'reconcile report (status event kind report); may change the node health',
    body: ReconciliationReportSchema,
    responses: { 200: Accepted({ status: Type.String(), drift_items: N }), ...FORBIDDEN },
    handler: async (req, res) => {
      await recordReconciliation(deps, req.body, requestMetadata(req, res, ctx.now()), ctx.now());
      res.json({ accepted: true, node_id: agentNode(res), status: req.body.status, drift_items: req.body.drift_items.length });
    },
  });
  r.route({
    ...common,
    path: PATHS.apply,
    bodyLimit: REPORT_BODY_LIMITS.apply,
    summary: 'apply result (status event kind apply); may change the node health',
    body: ApplyResultSchema,
    responses: { 200: Accepted({ generation: N, status: Type.String() }), ...FORBIDDEN },
    handler: async (req, res) => {
      await recordApply(deps, req.body, requestMetadata(req, res, ctx.now()), ctx.now());
      res.json({ accepted: true, node_id: agentNode(res), generation: req.body.generation, status: req.body.status });
    },
  });
  return r;
}
