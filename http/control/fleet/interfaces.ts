import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { FleetDeps, NodeWriteOutcome } from '../../../commands/fleet-write.js';
import { createInterface, createSession, deleteInterface, deleteSession, updateInterface, updateSession } from '../../../commands/interfaces.js';
import { NotFound } from '../../../domain/errors.js';
import { InterfaceSpecSchema, SessionSpecSchema } from '../../../domain/node/specs.js';
import type { EventMetadata } from '../../../infra/eventstore/types.js';
import type { Queryable } from '../../../infra/db/pool.js';
import { getInterface, getSession, listInterfaces, listSessions, ownerOf } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { InterfaceOutSchema, SessionOutSchema } from './schemas.js';
import { ADMIN, fleetDeps, IdParam, intParam, metadataOf, NodeIdParams, nodeOr404, SortOrder, TAGS } from './common.js';

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
const SessionIn = Type.Object(
  { spec: SessionSpecSchema, peering_id: Type.Optional(PeeringRef), sort_order: Type.Optional(SortOrder) },
  { additionalProperties: false },
);
const SessionPatch = Type.Object(
  {
    spec: Type.Optional(SessionSpecSchema),
    peering_id: Type.Optional(PeeringRef),
    sort_order: Type.Optional(SortOrder),
    clear_peering: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** What differs between the interface routes and the session routes. */
interface ChildKind<In extends TSchema, Patch extends TSchema> {
  /** `interface`, `bgp session`: the word in summaries and 404 texts. */
  label: string;
  /** The record as the routes answer it. */
  out: TSchema;
  owner: 'interface' | 'bgp_session';
  /** `/nodes/{node_id}/<collection>` and `/<collection>/{<param>}`. */
  collection: string;
  param: string;
  body: In;
  patch: Patch;
  list(db: Queryable, nodeId: string): Promise<unknown[]>;
  get(db: Queryable, id: number): Promise<unknown>;
  create(deps: FleetDeps, nodeId: string, body: Static<In>, metadata: EventMetadata): Promise<NodeWriteOutcome<number>>;
  update(deps: FleetDeps, nodeId: string, id: number, body: Static<Patch>, metadata: EventMetadata): Promise<NodeWriteOutcome<void>>;
  remove(deps: FleetDeps, nodeId: string, id: number, metadata: EventMetadata): Promise<NodeWriteOutcome<void>>;
}

const INTERFACES: ChildKind<typeof InterfaceIn, typeof InterfacePatch> = {
  label: 'interface',
  out: InterfaceOutSchema,
  owner: 'interface',
  collection: 'interfaces',
  param: 'iface_id',
  body: InterfaceIn,
  patch: InterfacePatch,
  list: listInterfaces,
  get: getInterface,
  create: (deps, nodeId, b, m) =>
    createInterface(deps, nodeId, { spec: b.spec, peering_id: b.peering_id ?? null, enabled: b.enabled ?? true, sort_order: b.sort_order ?? 0 }, m),
  update: updateInterface,
  remove: deleteInterface,
};

const SESSIONS: ChildKind<typeof SessionIn, typeof SessionPatch> = {
  label: 'bgp session',
  out: SessionOutSchema,
  owner: 'bgp_session',
  collection: 'bgp-sessions',
  param: 'session_id',
  body: SessionIn,
  patch: SessionPatch,
  list: listSessions,
  get: getSession,
  create: (deps, nodeId, b, m) => createSession(deps, nodeId, { spec: b.spec, peering_id: b.peering_id ?? null, sort_order: b.sort_order ?? 0 }, m),
  update: updateSession,
  remove: deleteSession,
};

/** WireGuard interface records and BGP session records of a node: the same five routes each. */
export function interfaceRoutes(ctx: ServiceContext): ApiRouter {
  const r = new ApiRouter('/control/v1');
  childRoutes(ctx, r, INTERFACES);
  childRoutes(ctx, r, SESSIONS);
  return r;
}

function childRoutes<In extends TSchema, Patch extends TSchema>(ctx: ServiceContext, r: ApiRouter, kind: ChildKind<In, Patch>): void {
  const deps = fleetDeps(ctx);
  const common = { security: ADMIN, tags: TAGS.interfaces };
  const params = IdParam(kind.param);
  const one = `/admin/${kind.collection}/{${kind.param}}`;

  async function found(id: number) {
    const row = await kind.get(ctx.pool, id);
    if (!row) throw new NotFound(`unknown ${kind.label} ${id}`);
    return row;
  }
  async function owner(id: number): Promise<string> {
    const nodeId = await ownerOf(ctx.pool, kind.owner, id);
    if (!nodeId) throw new NotFound(`unknown ${kind.label} ${id}`);
    return nodeId;
  }

  r.route({
    ...common,
    method: 'get',
    path: `/admin/nodes/{node_id}/${kind.collection}`,
    summary: `${kind.label} records of a node ordered by (sort_order, id)`,
    params: NodeIdParams,
    responses: { 200: Type.Array(kind.out, { description: `${kind.label} records ordered by (sort_order, id)` }), 404: 'unknown node' },
    handler: async (req, res) => {
      await nodeOr404(ctx, req.params.node_id);
      res.json(await kind.list(ctx.pool, req.params.node_id));
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: `/admin/nodes/{node_id}/${kind.collection}`,
    summary: `create a ${kind.label}; materialise and broadcast`,
    params: NodeIdParams,
    body: kind.body,
    responses: {
      201: kind.out,
      400: 'peering not on node',
      404: 'unknown node',
      409: 'duplicate name (or WireGuard port in use)',
      422: 'invalid (or port out of range)',
    },
    handler: async (req, res) => {
      const { result: id } = await kind.create(deps, req.params.node_id, req.body as Static<In>, metadataOf(ctx, req, res));
      res.status(201).json(await found(id));
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: one,
    summary: `one ${kind.label}`,
    params,
    responses: { 200: kind.out, 404: `unknown ${kind.label}` },
    handler: async (req, res) => {
      res.json(await found(intParam(req.params[kind.param])));
    },
  });
  r.route({
    ...common,
    method: 'patch',
    path: one,
    summary: `update a ${kind.label} (clear_peering unlinks it from its peering)`,
    params,
    body: kind.patch,
    responses: { 200: kind.out, 400: 'peering not on node', 404: `unknown ${kind.label}`, 409: 'conflict', 422: 'invalid' },
    handler: async (req, res) => {
      const id = intParam(req.params[kind.param]);
      await kind.update(deps, await owner(id), id, req.body as Static<Patch>, metadataOf(ctx, req, res));
      res.json(await found(id));
    },
  });
  r.route({
    ...common,
    method: 'delete',
    path: one,
    summary: `delete a ${kind.label}`,
    params,
    responses: { 204: 'deleted', 404: `unknown ${kind.label}` },
    handler: async (req, res) => {
      const id = intParam(req.params[kind.param]);
      await kind.remove(deps, await owner(id), id, metadataOf(ctx, req, res));
      res.status(204).end();
    },
  });
}
