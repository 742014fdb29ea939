import { Type } from '@sinclair/typebox';
import { notifyNode } from '../../../commands/notify.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { NotifyResult } from './schemas.js';
import { ADMIN, fleetDeps, metadataOf, NodeIdParams, TAGS } from './common.js';

const NotifyBody = Type.Object(
  {
    event: Type.Optional(Type.Union([Type.Literal('desired_state_updated'), Type.Literal('snapshot_request')], { default: 'desired_state_updated' })),
    reason: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

/** `POST /admin/nodes/{node_id}/notify`: ring the node's agents (a new generation for `desired_state_updated`). */
export function notifyRoutes(ctx: ServiceContext): ApiRouter {
  const deps = fleetDeps(ctx);
  return new ApiRouter('/control/v1').route({
    method: 'post',
    path: '/admin/nodes/{node_id}/notify',
    summary: 'tell the connected agents of a node: desired_state_updated (re-publishes as a new generation) or snapshot_request',
    security: ADMIN,
    tags: TAGS.generations,
    params: NodeIdParams,
    body: NotifyBody,
    responses: { 200: NotifyResult, 404: 'unknown node or no desired state', 409: 'node <id> has no connected agent' },
    handler: async (req, res) => {
      const { event = 'desired_state_updated', reason } = req.body;
      res.json(await notifyNode(deps, req.params.node_id, event, reason, metadataOf(ctx, req, res)));
    },
  });
}
