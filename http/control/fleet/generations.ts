import { Type } from '@sinclair/typebox';
import { provisionState, rollbackGeneration, type ProvisionedToken } from '../../../commands/generations.js';
import { checkLiteralToken, parseAgentToken } from '../../../domain/agent/secrets.js';
import { sha256Hex } from '../../../domain/sha256.js';
import { diffStates } from '../../../domain/desired-state/diff.js';
import { BadReference, NotFound } from '../../../domain/errors.js';
import { parsePosition } from '../../../infra/eventstore/types.js';
import { generationAt, getGeneration, listGenerations, nodeHasHistory, nodeHistory } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { GenerationDetailSchema, GenerationDiff, GenerationList, NodeHistory, ProvisionResult, PublishedState, RollbackResult } from './schemas.js';
import { ADMIN, fleetDeps, intParam, metadataOf, NodeIdParams, nodeOr404, TAGS } from './common.js';
import { PROVISION_BODY_LIMIT_BYTES } from './body-limits.js';

const GenerationParams = Type.Object({ node_id: Type.String({ minLength: 1, maxLength: 64 }), generation: Type.Integer({ minimum: 1, maximum: 2147483647 }) });

/** Published desired states: current, history, detail, diff, rollback, provision, and replay for auditors. */
export function generationRoutes(ctx: ServiceContext): ApiRouter {
  const deps = fleetDeps(ctx);
  const r = new ApiRouter('/control/v1');
  const common = { security: ADMIN, tags: TAGS.generations };

  async function generation(nodeId: string, g: number) {
    const found = await getGeneration(ctx.pool, nodeId, g);
    if (!found) throw new NotFound(`node ${nodeId} has no generation ${g}`);
    return found;
  }

  r.route({
    ...common,
    method: 'get',
    path: '/admin/nodes/{node_id}/desired-state',
    summary: 'the published desired state; with `at`, the generation in force at that time',
    params: NodeIdParams,
    query: Type.Object({ at: Type.Optional(Type.String({ format: 'date-time' })) }),
    responses: { 200: PublishedState, 404: 'unknown node or no desired state' },
    handler: async (req, res) => {
      const nodeId = req.params.node_id;
      await nodeOr404(ctx, nodeId);
      const at = req.validQuery.at ? new Date(req.validQuery.at) : undefined;
      const found = await generationAt(ctx.pool, nodeId, at);
      if (!found) throw new NotFound(at ? `no desired state for node ${nodeId} at ${at.toISOString()}` : `no desired state for node ${nodeId}`);
      res.json({ node_id: nodeId, generation: found.generation, reason: found.reason, created_at: found.created_at, state: found.state });
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: '/admin/nodes/{node_id}/generations',
    summary: 'generation history, newest first',
    params: NodeIdParams,
    query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }) }),
    responses: { 200: GenerationList, 404: 'unknown node' },
    handler: async (req, res) => {
      await nodeOr404(ctx, req.params.node_id);
      res.json({ generations: await listGenerations(ctx.pool, req.params.node_id, req.validQuery.limit) });
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: '/admin/nodes/{node_id}/generations/{generation}',
    summary: 'metadata plus the full snapshot',
    params: GenerationParams,
    responses: { 200: GenerationDetailSchema, 404: 'unknown node or generation' },
    handler: async (req, res) => {
      await nodeOr404(ctx, req.params.node_id);
      res.json(await generation(req.params.node_id, intParam(req.params.generation)));
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: '/admin/nodes/{node_id}/generations/{generation}/diff',
    summary: 'field-level diff against another generation (default: the previous one)',
    params: GenerationParams,
    query: Type.Object({ against: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647 })) }),
    responses: { 200: GenerationDiff, 400: 'no previous generation', 404: 'unknown node or generation' },
    handler: async (req, res) => {
      const nodeId = req.params.node_id;
      const g = intParam(req.params.generation);
      await nodeOr404(ctx, nodeId);
      const target = await generation(nodeId, g);
      const against = req.validQuery.against ?? g - 1;
      if (against < 1) throw new BadReference('no previous generation to diff against');
      const base = await generation(nodeId, against);
      res.json({ node_id: nodeId, generation: g, against, changes: diffStates(base.state, target.state) });
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: '/admin/nodes/{node_id}/generations/{generation}/rollback',
    summary: 're-publish the snapshot of a generation as a new generation',
    params: GenerationParams,
    responses: { 200: RollbackResult, 404: 'unknown node or generation' },
    handler: async (req, res) => {
      const nodeId = req.params.node_id;
      const g = intParam(req.params.generation);
      const outcome = await rollbackGeneration(deps, nodeId, g, metadataOf(ctx, req, res));
      const published = outcome.published[0];
      const delivery = outcome.deliveries[0];
      res.json({
        node_id: nodeId,
        target_generation: g,
        new_generation: published.generation,
        reason: published.reason,
        subscribers: delivery?.subscribers ?? 0,
        delivered: delivery?.delivered ?? 0,
      });
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: '/admin/provision',
    summary: 'store a complete desired state as a new generation (creates the node record when missing)',
    bodyLimit: PROVISION_BODY_LIMIT_BYTES,
    body: Type.Object(
      { state: Type.Record(Type.String(), Type.Unknown()), agent_token: Type.Optional(Type.String({ maxLength: 512 })) },
      { additionalProperties: false },
    ),
    responses: {
      201: ProvisionResult,
      400: '`agent_token` is not a full agent token `agt_<suffix>.<secret>` with a strong secret (`invalid token: ...`)',
      409: '`agent token <id> already exists` (for another node or with another secret)',
      422: 'invalid state',
    },
    handler: async (req, res) => {
      const outcome = await provisionState(deps, req.body.state, metadataOf(ctx, req, res), provisionedToken(req.body.agent_token, ctx.now()));
      const delivery = outcome.deliveries[0];
      res.status(201).json({
        node_id: outcome.result,
        generation: outcome.published[0].generation,
        subscribers: delivery?.subscribers ?? 0,
        delivered: delivery?.delivered ?? 0,
      });
    },
  });
  r.route({
    ...common,
    method: 'get',
    path: '/admin/nodes/{node_id}/history',
    summary: "the node's events, newest first (type, time, actor, request id, data); `before` pages",
    params: NodeIdParams,
    query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }), before: Type.Optional(Type.String({ pattern: '^\\d+/\\d+$' })) }),
    responses: { 200: NodeHistory, 404: 'unknown node' },
    handler: async (req, res) => {
      const nodeId = req.params.node_id;
      if (!(await nodeHasHistory(ctx.pool, nodeId))) throw new NotFound(`unknown node ${nodeId}`);
      const before = req.validQuery.before ? parsePosition(req.validQuery.before) : undefined;
      const events = await nodeHistory(ctx.pool, nodeId, req.validQuery.limit, before);
      res.json({ node_id: nodeId, events, next_before: events.length === req.validQuery.limit ? events[events.length - 1].position : null });
    },
  });
  return r;
}

/**
 * `agent_token` of `POST /provision`: the full token an agent was installed with,
 * so its id is known to both sides; the secret must pass the literal-token rule.
 */
function provisionedToken(text: string | undefined, now: Date): ProvisionedToken | undefined {
  if (text === undefined) return undefined;
  const parsed = parseAgentToken(text);
  if (!parsed || !/^agt_[0-9a-f]{16}$/.test(parsed.tokenId))
    throw new BadReference('invalid token: agent_token must be a full agent token agt_<16 hex>.<secret>');
  return { tokenId: parsed.tokenId, secretSha256: sha256Hex(checkLiteralToken(parsed.secret)), now };
}
