import { Type } from '@sinclair/typebox';
import type { AgentDeps } from '../../../commands/agent-tokens.js';
import { issueAgentToken, revokeAgentToken, rotateAgentToken, type IssuedAgentToken } from '../../../commands/agent-tokens.js';
import { listAgentTokens } from '../../../projections/agents/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { ADMIN, metadataOf, NodeIdParams, nodeOr404 } from '../fleet/common.js';

const TAGS = ['agent tokens, enrollment, registrations'];

const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
const TtlSeconds = Type.Integer({ minimum: 1, maximum: 10 * 365 * 86400 });

/** AgentTokenOut: on issue and rotate `token` (and `secret`) is the full `<token_id>.<secret>`; listed, `token` is the token id. */
export const AgentTokenOut = Type.Object({
  token: Type.String(),
  secret: Type.Optional(Type.String()),
  node_id: Type.String(),
  agent_id: Type.Union([Type.String(), Type.Null()]),
  issued_at: Timestamp,
  expires_at: NullableTimestamp,
  revoked_at: NullableTimestamp,
});

const IssueBody = Type.Object(
  {
    token: Type.Optional(Type.String({ description: 'literal secret: 43 to 512 base64url characters with at least 128 bits of estimated entropy, else 400' })),
    agent_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 128 }), Type.Null()])),
    ttl_seconds: Type.Optional(Type.Union([TtlSeconds, Type.Null()])),
  },
  { additionalProperties: false },
);
const RotateBody = Type.Object({ ttl_seconds: Type.Optional(TtlSeconds) }, { additionalProperties: false });
const TokenIdParams = Type.Object({ token_id: Type.String({ minLength: 1, maxLength: 128 }) });

export function agentDeps(ctx: ServiceContext): AgentDeps {
  return { store: ctx.store, db: ctx.pool, settle: ctx.store.transactional ? undefined : () => ctx.projections.catchUp(['agents']) };
}

/** The full token, shown once. */
function shownOnce(t: IssuedAgentToken) {
  return { token: t.token, secret: t.token, node_id: t.node_id, agent_id: t.agent_id, issued_at: t.issued_at, expires_at: t.expires_at, revoked_at: null };
}

/** `/admin/nodes/{id}/agent-tokens`, `/admin/agent-tokens/{id}`, enrollment tokens and registrations. */
export function agentTokenRoutes(ctx: ServiceContext): ApiRouter {
  const deps = agentDeps(ctx);
  const r = new ApiRouter('/control/v1');
  const common = { security: ADMIN, tags: TAGS };
  r.route({
    ...common,
    method: 'get',
    path: '/admin/nodes/{node_id}/agent-tokens',
    summary: "the node's agent tokens, metadata only (oldest first)",
    params: NodeIdParams,
    responses: { 200: Type.Array(AgentTokenOut), 404: 'unknown node' },
    handler: async (req, res) => {
      await nodeOr404(ctx, req.params.node_id);
      res.json(await listAgentTokens(ctx.pool, req.params.node_id));
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: '/admin/nodes/{node_id}/agent-tokens',
    summary: 'issue an agent token bound to the node; the full token appears only in this response',
    params: NodeIdParams,
    body: IssueBody,
    responses: { 201: AgentTokenOut, 400: 'invalid token (literal too short, not base64url or too little entropy)', 404: 'unknown node', 422: 'invalid field' },
    handler: async (req, res) => {
      const issued = await issueAgentToken(deps, req.params.node_id, { ...req.body, now: ctx.now() }, metadataOf(ctx, req, res));
      res.status(201).json(shownOnce(issued));
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: '/admin/agent-tokens/{token_id}/rotate',
    summary: 'revoke the token and issue its successor (same node and agent; same lifetime unless ttl_seconds)',
    params: TokenIdParams,
    body: RotateBody,
    responses: { 201: AgentTokenOut, 404: 'unknown agent token or node', 409: 'token already revoked' },
    handler: async (req, res) => {
      const issued = await rotateAgentToken(deps, req.params.token_id, { ...req.body, now: ctx.now() }, metadataOf(ctx, req, res));
      res.status(201).json(shownOnce(issued));
    },
  });
  r.route({
    ...common,
    method: 'delete',
    path: '/admin/agent-tokens/{token_id}',
    summary: 'revoke the token (revoking again is a no-op)',
    params: TokenIdParams,
    responses: { 204: 'revoked', 404: 'unknown agent token' },
    handler: async (req, res) => {
      await revokeAgentToken(deps, req.params.token_id, ctx.now(), metadataOf(ctx, req, res));
      res.status(204).end();
    },
  });
  return r;
}
