import { Type } from '@sinclair/typebox';
import { NotFound } from '../../../domain/errors.js';
import { generationAt } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { AGENT, AGENT_TAGS, agentRouter, checkAgentNode } from './reports.js';

/**
 * `GET /agent/desired-state`: the token node's published desired state. A GET has
 * no body, so `node_id` comes as an optional query parameter; given, it must be
 * the token's node (403), absent, the token's node is meant.
 */
export function agentDesiredStateRoutes(ctx: ServiceContext) {
  const path = '/agent/desired-state';
  return agentRouter(ctx, [path]).route({
    method: 'get',
    path,
    summary: "the token node's published desired state with its generation",
    security: AGENT,
    tags: AGENT_TAGS,
    query: Type.Object({ node_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }, { additionalProperties: false }),
    responses: {
      200: Type.Object({ node_id: Type.String(), generation: Type.Integer(), reason: Type.String(), created_at: Type.String(), state: Type.Object({}) }),
      401: 'missing, wrong, expired or revoked agent token',
      403: 'node_id is not the token node',
      404: 'no desired state for node <id>',
    },
    handler: async (req, res) => {
      const nodeId = req.validQuery.node_id ?? (res.locals.agent as { node_id: string }).node_id;
      checkAgentNode(res, nodeId);
      const found = await generationAt(ctx.pool, nodeId);
      if (!found) throw new NotFound(`no desired state for node ${nodeId}`);
      res.json({ node_id: nodeId, generation: found.generation, reason: found.reason, created_at: found.created_at, state: found.state });
    },
  });
}
