import { Type, type Static } from '@sinclair/typebox';
import { backfillPeerings, createPeering, deletePeering, provisionPeering, replacePeeringFull, updatePeering } from '../../../commands/peerings.js';
import { NotFound, Validation } from '../../../domain/errors.js';
import { InterfaceSpecSchema, PeeringInSchema, PeeringPatchSchema, SessionSpecSchema } from '../../../domain/node/specs.js';
import { getInterface, getPeering, getSession, listPeerings, ownerOf, peeringsFull, type PeeringOut } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { BackfillResult, PeeringFullSchema, PeeringOutSchema, PeeringRowSchema, ProvisionPeeringResult, ReplacePeeringResult } from './schemas.js';
import { ADMIN, fleetDeps, IdParam, intParam, metadataOf, NodeIdParams, nodeOr404, SortOrder, TAGS } from './common.js';

/** Looks up AS names for peering rows; null where unknown or when no registry replica is reachable. */
export type AsNameLookup = (asns: readonly number[]) => Promise<ReadonlyMap<number, string | null>>;

const noRegistry: AsNameLookup = async () => new Map();

const ProvisionBody = Type.Object(
  {
    peering: PeeringInSchema,
    interface_spec: InterfaceSpecSchema,
    interface_enabled: Type.Optional(Type.Boolean()),
    interface_sort_order: Type.Optional(SortOrder),
    bgp_spec: Type.Optional(SessionSpecSchema),
    bgp_sort_order: Type.Optional(SortOrder),
    bgp_specs: Type.Optional(Type.Array(SessionSpecSchema, { maxItems: 16 })),
  },
  { additionalProperties: false },
);

const FullBody = Type.Object(
  {
    peering: PeeringInSchema,
    interfaces: Type.Array(
      Type.Object({ spec: InterfaceSpecSchema, enabled: Type.Optional(Type.Boolean()), sort_order: Type.Optional(SortOrder) }, { additionalProperties: false }),
      { maxItems: 16 },
    ),
    bgp_sessions: Type.Array(Type.Object({ spec: SessionSpecSchema, sort_order: Type.Optional(SortOrder) }, { additionalProperties: false }), { maxItems: 16 }),
  },
  { additionalProperties: false },
);

const PeeringParams = IdParam('peering_id');

/** Peerings of a node, one peering, provision, full views, create-or-replace and backfill. */
export function peeringRoutes(ctx: ServiceContext, asNames: AsNameLookup = noRegistry): ApiRouter {
  const deps = fleetDeps(ctx);
  const r = new ApiRouter('/control/v1');
  const common = { security: ADMIN, tags: TAGS.peerings };

  async function withNames(rows: PeeringOut[]) {
    const names = rows.length ? await asNames([...new Set(rows.map((p) => p.remote_asn))]) : new Map<number, string | null>();
    return rows.map((p) => ({ ...p, remote_as_name: names.get(p.remote_asn) ?? null }));
  }

  async function owner(peeringId: number): Promise<string> {
    const nodeId = await ownerOf(ctx.pool, 'peering', peeringId);
    if (!nodeId) throw new NotFound(`unknown peering ${peeringId}`);
    return nodeId;
  }

  const notFound = (id: number): never => {
    throw new NotFound(`unknown peering ${id}`);
  };

  async function peering(id: number) {
    const found = await getPeering(ctx.pool, id);
    if (!found) throw new NotFound(`unknown peering ${id}`);
    return found;
  }

  r.route({
    ...common,
    method: 'get',
    path: '/admin/nodes/{node_id}/peerings',
    summary: 'peerings of a node ordered by name, with remote_as_name',
    params: NodeIdParams,
    responses: { 200: Type.Array(PeeringRowSchema, { description: 'peerings ordered by name' }), 404: 'unknown node' },
    handler: async (req, res) => {
      await nodeOr404(ctx, req.params.node_id);
      res.json(await withNames(await listPeerings(ctx.pool, req.params.node_id)));
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: '/admin/nodes/{node_id}/peerings',
    summary: 'create a peering',
    params: NodeIdParams,
    body: PeeringInSchema,
    responses: { 201: PeeringOutSchema, 400: 'unknown remote node', 404: 'unknown node', 409: 'duplicate name' },
    handler: async (req, res) => {
      const { answer } = await createPeering(deps, req.params.node_id, req.body, metadataOf(ctx, req, res), (db, id) =>
        getPeering(db, id).then((p) => p ?? notFound(id)),
      );
      res.status(201).json(answer);
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: '/admin/peerings/{peering_id}',
    summary: 'one peering',
    params: PeeringParams,
    responses: { 200: PeeringOutSchema, 404: 'unknown peering' },
    handler: async (req, res) => {
      res.json(await peering(intParam(req.params.peering_id)));
    },
  });
  r.route({
    ...common,
    method: 'patch',
    path: '/admin/peerings/{peering_id}',
    summary: 'partial update of a peering',
    params: PeeringParams,
    body: PeeringPatchSchema,
    responses: { 200: PeeringOutSchema, 400: 'unknown remote node', 404: 'unknown peering', 409: 'duplicate name' },
    handler: async (req, res) => {
      const id = intParam(req.params.peering_id);
      const { answer } = await updatePeering(deps, await owner(id), id, req.body, metadataOf(ctx, req, res), (db) =>
        getPeering(db, id).then((p) => p ?? notFound(id)),
      );
      res.json(answer);
    },
  });
  r.route({
    ...common,
    method: 'delete',
    path: '/admin/peerings/{peering_id}',
    summary: 'delete a peering with its interfaces and sessions',
    params: PeeringParams,
    responses: { 204: 'deleted', 404: 'unknown peering' },
    handler: async (req, res) => {
      const id = intParam(req.params.peering_id);
      await deletePeering(deps, await owner(id), id, metadataOf(ctx, req, res));
      res.status(204).end();
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: '/admin/nodes/{node_id}/peerings/provision',
    summary: 'one transaction: a peering, its interface and its BGP sessions',
    params: NodeIdParams,
    body: ProvisionBody,
    responses: { 201: ProvisionPeeringResult, 400: 'unknown remote node', 404: 'unknown node', 409: 'conflict', 422: 'invalid' },
    handler: async (req, res) => {
      const body = req.body as Static<typeof ProvisionBody>;
      if (body.bgp_spec && body.bgp_specs) {
        throw new Validation('give either bgp_spec or bgp_specs, not both', [
          { loc: ['body', 'bgp_specs'], msg: 'bgp_spec and bgp_specs are mutually exclusive', type: 'value_error' },
        ]);
      }
      const sessions = body.bgp_specs
        ? body.bgp_specs.map((spec, i) => ({ spec, sort_order: (body.bgp_sort_order ?? 0) + i }))
        : body.bgp_spec
          ? [{ spec: body.bgp_spec, sort_order: body.bgp_sort_order ?? 0 }]
          : [];
      const outcome = await provisionPeering(
        deps,
        req.params.node_id,
        {
          peering: body.peering,
          interface: { spec: body.interface_spec, enabled: body.interface_enabled ?? true, sort_order: body.interface_sort_order ?? 0 },
          sessions,
        },
        metadataOf(ctx, req, res),
      );
      const ids = outcome.result;
      const sessionRows = await Promise.all(ids.session_ids.map((id) => getSession(ctx.pool, id)));
      res.status(201).json({
        peering: await peering(ids.peering_id),
        interface: await getInterface(ctx.pool, ids.interface_id),
        bgp_session: sessionRows[0] ?? null,
        sessions: sessionRows,
        generation: outcome.published[0]?.generation ?? null,
      });
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: '/admin/nodes/{node_id}/peerings/full',
    summary: 'peerings of a node with their interfaces and sessions',
    params: NodeIdParams,
    responses: { 200: Type.Array(PeeringFullSchema, { description: 'peerings with their interfaces and sessions' }), 404: 'unknown node' },
    handler: async (req, res) => {
      await nodeOr404(ctx, req.params.node_id);
      res.json(await peeringsFull(ctx.pool, { nodeId: req.params.node_id }));
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: '/admin/peerings/{peering_id}/full',
    summary: 'one peering with its interfaces and sessions',
    params: PeeringParams,
    responses: { 200: PeeringFullSchema, 404: 'unknown peering' },
    handler: async (req, res) => {
      const id = intParam(req.params.peering_id);
      const [found] = await peeringsFull(ctx.pool, { peeringId: id });
      if (!found) throw new NotFound(`unknown peering ${id}`);
      res.json(found);
    },
  });
  r.route({
    ...common,
    method: 'put',
    path: '/admin/nodes/{node_id}/peerings/full',
    summary: 'create or replace a peering by name; its interfaces and sessions are replaced',
    params: NodeIdParams,
    body: FullBody,
    responses: { 200: ReplacePeeringResult, 400: 'unknown remote node', 404: 'unknown node', 409: 'conflict', 422: 'invalid' },
    handler: async (req, res) => {
      const body = req.body as Static<typeof FullBody>;
      const outcome = await replacePeeringFull(
        deps,
        req.params.node_id,
        {
          peering: body.peering,
          interfaces: body.interfaces.map((i) => ({ spec: i.spec, enabled: i.enabled ?? true, sort_order: i.sort_order ?? 0 })),
          sessions: body.bgp_sessions.map((s) => ({ spec: s.spec, sort_order: s.sort_order ?? 0 })),
        },
        metadataOf(ctx, req, res),
      );
      const [full] = await peeringsFull(ctx.pool, { peeringId: outcome.result });
      res.json({ peering: full, generation: outcome.published[0]?.generation ?? null });
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: '/admin/nodes/{node_id}/peerings/backfill',
    summary: 'fold orphan interfaces and sessions into peerings; dry_run (default false) only plans',
    params: NodeIdParams,
    body: Type.Object({ dry_run: Type.Optional(Type.Boolean()) }, { additionalProperties: false }),
    responses: { 200: BackfillResult, 404: 'unknown node' },
    handler: async (req, res) => {
      const outcome = await backfillPeerings(deps, req.params.node_id, req.body.dry_run ?? false, metadataOf(ctx, req, res));
      res.json({ dry_run: outcome.dry_run, ...outcome.result, generation: outcome.published[0]?.generation ?? null });
    },
  });
  return r;
}
