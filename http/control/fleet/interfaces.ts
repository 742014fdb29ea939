import { Type, type Static } from '@sinclair/typebox';
import { createInterface, createSession, deleteInterface, deleteSession, updateInterface, updateSession } from '../../../commands/interfaces.js';
import { NotFound } from '../../../domain/errors.js';
import { InterfaceSpecSchema, SessionSpecSchema } from '../../../domain/node/specs.js';
import { getInterface, getSession, listInterfaces, listSessions, ownerOf } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN, fleetDeps, IdParam, intParam, metadataOf, NodeIdParams, nodeOr404, TAGS } from './common.js';

const SortOrder = Type.Integer({ minimum: -2147483648, maximum: 2147483647 });
const PeeringRef = Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]);

const InterfaceIn = Type.Object(
  { spec: InterfaceSpecSchema, peering_id: Type.Optional(PeeringRef), enabled: Type.Optional(Type.Boolean()), sort_order: Type.Optional(SortOrder) },
  { additionalProperties: false },
);
const InterfacePatch = Type.Object(
  {
    spec: Type.Optional(InterfaceSpecSchema),
    peering_id: Type.Optional(PeeringRef),
    enabled: Type.Optional(Type.Boolean()),
    sort_order: Type.Optional(SortOrder),
    clear_peering: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const SessionIn = Type.Object({ spec: SessionSpecSchema, peering_id: Type.Optional(PeeringRef), sort_order: Type.Optional(SortOrder) }, { additionalProperties: false });
const SessionPatch = Type.Object(
  { spec: Type.Optional(SessionSpecSchema), peering_id: Type.Optional(PeeringRef), sort_order: Type.Optional(SortOrder), clear_peering: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

/** WireGuard interface records and BGP session records of a node. */
export function interfaceRoutes(ctx: ServiceContext): ApiRouter {
  const deps = fleetDeps(ctx);
  const r = new ApiRouter('/control/v1');
  const common = { security: ADMIN, tags: TAGS.interfaces };

  async function owner(kind: 'interface' | 'bgp_session', id: number): Promise<string> {
    const nodeId = await ownerOf(ctx.pool, kind, id);
    if (!nodeId) throw new NotFound(`unknown ${kind === 'interface' ? 'interface' : 'bgp session'} ${id}`);
    return nodeId;
  }
  async function iface(id: number) {
    const found = await getInterface(ctx.pool, id);
    if (!found) throw new NotFound(`unknown interface ${id}`);
    return found;
  }
  async function session(id: number) {
    const found = await getSession(ctx.pool, id);
    if (!found) throw new NotFound(`unknown bgp session ${id}`);
    return found;
  }

  r.route({
    ...common,
    method: 'get',
    path: '/admin/nodes/{node_id}/interfaces',
    summary: 'interfaces of a node ordered by (sort_order, id)',
    params: NodeIdParams,
    responses: { 200: 'InterfaceOut[]', 404: 'unknown node' },
    handler: async (req, res) => {
      await nodeOr404(ctx, req.params.node_id);
      res.json(await listInterfaces(ctx.pool, req.params.node_id));
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: '/admin/nodes/{node_id}/interfaces',
    summary: 'create an interface; materialise and broadcast',
    params: NodeIdParams,
    body: InterfaceIn,
    responses: { 201: 'InterfaceOut', 400: 'peering not on node', 404: 'unknown node', 409: 'duplicate name or port in use', 422: 'invalid or port out of range' },
    handler: async (req, res) => {
      const body = req.body as Static<typeof InterfaceIn>;
      const { result: id } = await createInterface(
        deps,
        req.params.node_id,
        { spec: body.spec, peering_id: body.peering_id ?? null, enabled: body.enabled ?? true, sort_order: body.sort_order ?? 0 },
        metadataOf(ctx, req, res),
      );
      res.status(201).json(await iface(id));
    },
  });
  const InterfaceParams = IdParam('iface_id');
  r.route({
    ...common,
    method: 'get',
    path: '/admin/interfaces/{iface_id}',
    summary: 'one interface',
    params: InterfaceParams,
    responses: { 200: 'InterfaceOut', 404: 'unknown interface' },
    handler: async (req, res) => {
      res.json(await iface(intParam(req.params.iface_id)));
    },
  });
  r.route({
    ...common,
    method: 'patch',
    path: '/admin/interfaces/{iface_id}',
    summary: 'update spec, enabled, sort_order, peering_id (clear_peering unlinks)',
    params: InterfaceParams,
    body: InterfacePatch,
    responses: { 200: 'InterfaceOut', 400: 'peering not on node', 404: 'unknown interface', 409: 'conflict', 422: 'invalid' },
    handler: async (req, res) => {
      const id = intParam(req.params.iface_id);
      await updateInterface(deps, await owner('interface', id), id, req.body as Static<typeof InterfacePatch>, metadataOf(ctx, req, res));
      res.json(await iface(id));
    },
  });
  r.route({
    ...common,
    method: 'delete',
    path: '/admin/interfaces/{iface_id}',
    summary: 'delete an interface',
    params: InterfaceParams,
    responses: { 204: 'deleted', 404: 'unknown interface' },
    handler: async (req, res) => {
      const id = intParam(req.params.iface_id);
      await deleteInterface(deps, await owner('interface', id), id, metadataOf(ctx, req, res));
      res.status(204).end();
    },
  });

  r.route({
    ...common,
    method: 'get',
    path: '/admin/nodes/{node_id}/bgp-sessions',
    summary: 'BGP sessions of a node ordered by (sort_order, id)',
    params: NodeIdParams,
    responses: { 200: 'SessionOut[]', 404: 'unknown node' },
    handler: async (req, res) => {
      await nodeOr404(ctx, req.params.node_id);
      res.json(await listSessions(ctx.pool, req.params.node_id));
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: '/admin/nodes/{node_id}/bgp-sessions',
    summary: 'create a BGP session; materialise and broadcast',
    params: NodeIdParams,
    body: SessionIn,
    responses: { 201: 'SessionOut', 400: 'peering not on node', 404: 'unknown node', 409: 'duplicate name', 422: 'invalid' },
    handler: async (req, res) => {
      const body = req.body as Static<typeof SessionIn>;
      const { result: id } = await createSession(deps, req.params.node_id, { spec: body.spec, peering_id: body.peering_id ?? null, sort_order: body.sort_order ?? 0 }, metadataOf(ctx, req, res));
      res.status(201).json(await session(id));
    },
  });
  const SessionParams = IdParam('session_id');
  r.route({
    ...common,
    method: 'get',
    path: '/admin/bgp-sessions/{session_id}',
    summary: 'one BGP session',
    params: SessionParams,
    responses: { 200: 'SessionOut', 404: 'unknown bgp session' },
    handler: async (req, res) => {
      res.json(await session(intParam(req.params.session_id)));
    },
  });
  r.route({
    ...common,
    method: 'patch',
    path: '/admin/bgp-sessions/{session_id}',
    summary: 'update spec, sort_order, peering_id (clear_peering unlinks)',
    params: SessionParams,
    body: SessionPatch,
    responses: { 200: 'SessionOut', 400: 'peering not on node', 404: 'unknown bgp session', 409: 'duplicate name', 422: 'invalid' },
    handler: async (req, res) => {
      const id = intParam(req.params.session_id);
      await updateSession(deps, await owner('bgp_session', id), id, req.body as Static<typeof SessionPatch>, metadataOf(ctx, req, res));
      res.json(await session(id));
    },
  });
  r.route({
    ...common,
    method: 'delete',
    path: '/admin/bgp-sessions/{session_id}',
    summary: 'delete a BGP session',
    params: SessionParams,
    responses: { 204: 'deleted', 404: 'unknown bgp session' },
    handler: async (req, res) => {
      const id = intParam(req.params.session_id);
      await deleteSession(deps, await owner('bgp_session', id), id, metadataOf(ctx, req, res));
      res.status(204).end();
    },
  });
  return r;
}
