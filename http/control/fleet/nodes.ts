import { Type } from '@sinclair/typebox';
import { createNode, decommissionNode, deleteNode, recommissionNode, updateNode } from '../../../commands/nodes.js';
import { nodeLifecycleRouting } from '../../../commands/routing.js';
import { NodeInSchema, NodePatchSchema } from '../../../domain/node/specs.js';
import { getNode, listNodes, type NodeOut } from '../../../projections/fleet/queries.js';
import { NotFound } from '../../../domain/errors.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { NodeOutSchema } from './schemas.js';
import { ADMIN, fleetDeps, metadataOf, NodeIdParams, nodeOr404, TAGS } from './common.js';
import { NODE_BODY_LIMIT_BYTES } from './body-limits.js';

/** `/admin/nodes`: create, list, read, patch, delete, decommission, recommission. */
export function nodeRoutes(ctx: ServiceContext): ApiRouter {
  const deps = fleetDeps(ctx);
  const r = new ApiRouter('/control/v1');
  const common = { security: ADMIN, tags: TAGS.nodes };
  r.route({
    ...common,
    method: 'get',
    path: '/admin/nodes',
    summary: 'all nodes ordered by node_id',
    responses: { 200: Type.Array(NodeOutSchema, { description: 'all nodes ordered by node_id' }) },
    handler: async (_req, res) => {
      res.json(await listNodes(ctx.pool));
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: '/admin/nodes',
    summary: 'create a node',
    body: NodeInSchema,
    bodyLimit: NODE_BODY_LIMIT_BYTES,
    responses: { 201: NodeOutSchema, 409: 'node already exists', 422: 'invalid field' },
    handler: async (req, res) => {
      const { node_id, ...fields } = req.body;
      const { answer } = await createNode(deps, node_id, fields, metadataOf(ctx, req, res), (db) => getNode(db, node_id));
      res.status(201).json(found(answer, node_id));
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: '/admin/nodes/{node_id}',
    summary: 'one node',
    params: NodeIdParams,
    responses: { 200: NodeOutSchema, 404: 'unknown node' },
    handler: async (req, res) => {
      res.json(await nodeOr404(ctx, req.params.node_id));
    },
  });
  r.route({
    ...common,
    method: 'patch',
    path: '/admin/nodes/{node_id}',
    summary: 'partial update; a published node is re-materialised in the same append',
    params: NodeIdParams,
    body: NodePatchSchema,
    bodyLimit: NODE_BODY_LIMIT_BYTES,
    responses: { 200: NodeOutSchema, 404: 'unknown node', 422: 'invalid field' },
    handler: async (req, res) => {
      const nodeId = req.params.node_id;
      const { answer } = await updateNode(deps, nodeId, req.body, metadataOf(ctx, req, res), (db) => getNode(db, nodeId));
      res.json(found(answer, nodeId));
    },
  });
  r.route({
    ...common,
    method: 'delete',
    path: '/admin/nodes/{node_id}',
    summary: 'delete a decommissioned or never published node',
    params: NodeIdParams,
    responses: { 204: 'deleted', 404: 'unknown node', 409: 'node is live' },
    handler: async (req, res) => {
      await deleteNode(deps, req.params.node_id, metadataOf(ctx, req, res));
      await nodeLifecycleRouting(ctx, req.params.node_id, 'deleted', ctx.now());
      res.status(204).end();
    },
  });
  for (const [verb, run, change] of [
    ['decommission', decommissionNode, 'decommissioned'],
    ['recommission', recommissionNode, 'recommissioned'],
  ] as const) {
    r.route({
      ...common,
      method: 'post',
      path: `/admin/nodes/{node_id}/${verb}`,
      summary: verb === 'decommission' ? 'publish an empty desired state; rows are kept' : 're-materialise a decommissioned node',
      params: NodeIdParams,
      responses: { 200: NodeOutSchema, 404: 'unknown node', 409: 'wrong lifecycle' },
      handler: async (req, res) => {
        const nodeId = req.params.node_id;
        const { answer } = await run(deps, nodeId, metadataOf(ctx, req, res), (db) => getNode(db, nodeId));
        // The fleet's routing counts non-decommissioned nodes: recomputed now, not at the next table.
        await nodeLifecycleRouting(ctx, nodeId, change, ctx.now());
        res.json(found(answer, nodeId));
      },
    });
  }
  return r;
}

/** A node as the write that answers left it (read in the write's transaction). */
function found(node: NodeOut | undefined, nodeId: string): NodeOut {
  if (!node) throw new NotFound(`unknown node ${nodeId}`);
  return node;
}
