import { Type } from '@sinclair/typebox';
import { setLinkLatency, tuneRoutes } from '../../../commands/route-tuning.js';
import { LocalPrefRuleSchema, routeTuningOf, RouteTuningPatchSchema } from '../../../domain/desired-state/route-tuning.js';
import { NotFound } from '../../../domain/errors.js';
import type { Queryable } from '../../../infra/db/pool.js';
import { getNode, getSession, listSessions, ownerOf, type SessionOut } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter, component } from '../../shared/routes.js';
import { ADMIN, fleetDeps, IdParam, intParam, metadataOf, NodeIdParams } from '../fleet/common.js';

const CONSOLE = { security: ADMIN, tags: ['console'] };

const LinkLatency = Type.Union([Type.Integer({ minimum: 1, maximum: 9 }), Type.Null()], { description: 'dn42 latency community (64511, 1..9); null: not set' });

const SessionRow = component(
  'RouteTuningSession',
  Type.Object({
    id: Type.Integer({ description: 'the BGP session record id' }),
    name: Type.String({ description: 'BIRD protocol name' }),
    remote_asn: Type.Integer({ description: 'the remote AS' }),
    link_latency: LinkLatency,
  }),
);

const RouteTuningView = Type.Object({
  node_id: Type.String(),
  cold_potato_med: Type.Union([Type.Integer(), Type.Null()]),
  route_local_pref: Type.Array(LocalPrefRuleSchema),
  sessions: Type.Array(SessionRow, { description: "the node's BGP session records, by (sort_order, id)" }),
  updated_at: Type.String({ format: 'date-time', description: "the node's updated_at" }),
});

const sessionRow = (s: SessionOut) => ({
  id: s.id,
  name: s.name,
  remote_asn: s.remote_asn,
  link_latency: (s.spec.link_latency as number | null | undefined) ?? null,
});

/** The route-tuning view from the read models (inside a write's transaction when `db` is its client). */
async function routeTuningView(db: Queryable, nodeId: string) {
  const node = await getNode(db, nodeId);
  if (!node) throw new NotFound(`unknown node ${nodeId}`);
  return { node_id: nodeId, ...routeTuningOf(node.base_template), sessions: (await listSessions(db, nodeId)).map(sessionRow), updated_at: node.updated_at };
}

/** `GET, PUT /ui/nodes/{id}/route-tuning` and `PUT /ui/bgp-sessions/{sid}/link-latency`. */
export function routeTuningRoutes(ctx: ServiceContext): ApiRouter {
  const deps = fleetDeps(ctx);
  const r = new ApiRouter('/control/v1');
  r.route({
    ...CONSOLE,
    method: 'get',
    path: '/ui/nodes/{node_id}/route-tuning',
    summary: "a node's cold-potato MED, local preferences by prefix and session latencies",
    params: NodeIdParams,
    responses: { 200: RouteTuningView, 404: 'unknown node' },
    handler: async (req, res) => {
      res.json(await routeTuningView(ctx.pool, req.params.node_id));
    },
  });
  r.route({
    ...CONSOLE,
    method: 'put',
    path: '/ui/nodes/{node_id}/route-tuning',
    summary: 'merge route tuning into base_template.bird (omitted fields untouched); a change re-publishes a published node',
    params: NodeIdParams,
    body: RouteTuningPatchSchema,
    responses: { 200: RouteTuningView, 404: 'unknown node', 422: 'invalid field or rule' },
    handler: async (req, res) => {
      const nodeId = req.params.node_id;
      const { answer } = await tuneRoutes(deps, nodeId, req.body, metadataOf(ctx, req, res), (db) => routeTuningView(db, nodeId));
      res.json(answer);
    },
  });
  r.route({
    ...CONSOLE,
    method: 'put',
    path: '/ui/bgp-sessions/{session_id}/link-latency',
    summary: "set one session's link_latency (null clears); a change re-publishes its node",
    params: IdParam('session_id'),
    body: Type.Object({ link_latency: LinkLatency }, { additionalProperties: false }),
    responses: { 200: SessionRow, 404: 'unknown bgp session', 422: 'invalid link_latency' },
    handler: async (req, res) => {
      const id = intParam(req.params.session_id);
      const nodeId = await ownerOf(ctx.pool, 'bgp_session', id);
      if (!nodeId) throw new NotFound(`unknown bgp session ${id}`);
      const { answer } = await setLinkLatency(deps, nodeId, id, req.body.link_latency, metadataOf(ctx, req, res), (db) => getSession(db, id));
      if (!answer) throw new NotFound(`unknown bgp session ${id}`);
      res.json(sessionRow(answer));
    },
  });
  return r;
}
