import { Type } from '@sinclair/typebox';
import type { AgentDeps } from '../../../commands/agent-tokens.js';
import { issueAgentToken, revokeAgentToken, rotateAgentToken, type IssuedAgentToken } from '../../../commands/agent-tokens.js';
import { createEnrollmentToken, deleteEnrollmentToken } from '../../../commands/enrollment.js';
import { decideRegistration } from '../../../commands/registrations.js';
import { announceRevoked } from '../../../infra/agent-hub/revocations.js';
import { listAgentTokens, listEnrollmentTokens, listRegistrations } from '../../../projections/agents/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter, component } from '../../shared/routes.js';
import { ADMIN, metadataOf, NodeIdParams, nodeOr404 } from '../fleet/common.js';

const TAGS = ['agent tokens, enrollment, registrations'];

const Timestamp = Type.String({ format: 'date-time' });
const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
const TtlSeconds = Type.Integer({ minimum: 1, maximum: 10 * 365 * 86400 });

/** AgentTokenOut: on issue and rotate `token` (and `secret`) is the full `<token_id>.<secret>`; listed, `token` is the token id. */
export const AgentTokenOut = component(
  'AgentToken',
  Type.Object({
    token: Type.String({ description: 'on issue and rotate the full `<token_id>.<secret>` (shown once); listed, the token id `agt_<suffix>`' }),
    secret: Type.Optional(Type.String({ description: 'on issue and rotate: the full token again' })),
    node_id: Type.String({ description: 'the one node the token is bound to' }),
    agent_id: Type.Union([Type.String(), Type.Null()], { description: 'the agent it was issued to, or null' }),
    issued_at: { ...Timestamp, description: 'when it was issued' },
    expires_at: { ...NullableTimestamp, description: 'when it expires; null: never' },
    revoked_at: { ...NullableTimestamp, description: 'when it was revoked (rotation, DELETE); null while active' },
  }),
);

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

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const EnrollmentTokenOut = component(
  'EnrollmentToken',
  Type.Object({
    token_id: Type.String({ description: 'non-secret id, used to list and delete' }),
    node_id: { ...Nullable(Type.String()), description: 'the node it enrolls, or null for any' },
    description: { ...Nullable(Type.String()), description: 'free text' },
    expires_at: { ...NullableTimestamp, description: 'when it expires; null: never' },
    used_at: { ...NullableTimestamp, description: 'when an agent used it; null while unused' },
    created_at: { ...Timestamp, description: 'when it was created' },
  }),
);
const EnrollmentTokenCreated = Type.Composite([
  EnrollmentTokenOut,
  Type.Object({ secret: Type.String({ description: 'the plaintext token, shown only in this response' }) }),
]);
const EnrollmentBody = Type.Object(
  {
    token: Type.Optional(
      Type.String({ description: 'literal secret: 43 to 512 base64url characters with at least 128 bits of estimated entropy, else 400; an existing one 409' }),
    ),
    node_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 64 }))),
    description: Type.Optional(Nullable(Type.String({ maxLength: 1024 }))),
    expires_at: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
  },
  { additionalProperties: false },
);

const RegistrationStatus = Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected')]);
export const RegistrationOut = component(
  'Registration',
  Type.Object({
    registration_id: Type.String({ description: 'the registration, used to approve or reject it' }),
    node_id: Type.String({ description: 'the requested node id; one registration per node' }),
    status: { ...RegistrationStatus, description: 'pending until an operator approves or rejects it' },
    hostname: { ...Nullable(Type.String()), description: 'the hostname the agent reported' },
    inventory: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: 'the inventory the agent reported (last request)' }),
    via: { ...Nullable(Type.String()), description: '`bootstrap` or `enrollment-token` (last request)' },
    enrollment_token_id: { ...Nullable(Type.String()), description: 'the enrollment token it came with, if any' },
    client_address: { ...Nullable(Type.String()), description: 'the address the last request came from' },
    requests: Type.Integer({ description: 'recorded requests (a repeat with the same inventory is recorded at most every 5 minutes)' }),
    first_seen_at: { ...Timestamp, description: 'its first request' },
    last_seen_at: { ...Timestamp, description: 'its last request' },
    decided_at: { ...NullableTimestamp, description: 'when it was approved or rejected; null while pending' },
    decided_by: { ...Nullable(Type.String()), description: 'who approved or rejected it' },
    note: { ...Nullable(Type.String()), description: "the operator's note" },
    agent_id: { ...Nullable(Type.String()), description: 'set by the last accepted register call' },
    agent_token_id: { ...Nullable(Type.String()), description: 'the agent token issued by the last accepted register call' },
    accepted_at: { ...NullableTimestamp, description: 'when the last register call was accepted' },
  }),
);
const RegistrationQuery = Type.Object({ status: Type.Optional(RegistrationStatus) }, { additionalProperties: false });
const RegistrationParams = Type.Object({ registration_id: Type.String({ minLength: 1, maxLength: 128 }) });
const NoteBody = Type.Object({ note: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))) }, { additionalProperties: false });

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
      res.setHeader('Cache-Control', 'no-store');
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
      await closeSocketsOf(ctx, req.params.token_id);
      res.setHeader('Cache-Control', 'no-store');
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
      await closeSocketsOf(ctx, req.params.token_id);
      res.status(204).end();
    },
  });
  enrollmentRoutes(ctx, r);
  registrationRoutes(ctx, r);
  return r;
}

/**
 * After a revocation committed: every instance closes the token's open sockets
 * (4401). A lost announcement is only logged; each instance's periodic token
 * check closes them too.
 */
async function closeSocketsOf(ctx: ServiceContext, tokenId: string): Promise<void> {
  await announceRevoked(ctx.pool, tokenId).catch((err) =>
    ctx.log.error({ err, token_id: tokenId }, 'could not announce a revoked agent token; its sockets close at the next token check'),
  );
}

function enrollmentRoutes(ctx: ServiceContext, r: ApiRouter): void {
  const deps = agentDeps(ctx);
  const common = { security: ADMIN, tags: TAGS };
  r.route({
    ...common,
    method: 'get',
    path: '/admin/enrollment-tokens',
    summary: 'enrollment tokens, metadata only (oldest first)',
    responses: { 200: Type.Array(EnrollmentTokenOut) },
    handler: async (_req, res) => {
      res.json(await listEnrollmentTokens(ctx.pool));
    },
  });
  r.route({
    ...common,
    method: 'post',
    path: '/admin/enrollment-tokens',
    summary: 'create a one-time enrollment token, optionally bound to a node; the secret appears only in this response',
    body: EnrollmentBody,
    responses: { 201: EnrollmentTokenCreated, 400: 'invalid token, or unknown node', 409: 'enrollment token already exists', 422: 'invalid field' },
    handler: async (req, res) => {
      res.setHeader('Cache-Control', 'no-store');
      res.status(201).json(await createEnrollmentToken(deps, { ...req.body, now: ctx.now() }, metadataOf(ctx, req, res)));
    },
  });
  r.route({
    ...common,
    method: 'delete',
    path: '/admin/enrollment-tokens/{token_id}',
    summary: 'delete an enrollment token (used or not)',
    params: TokenIdParams,
    responses: { 204: 'deleted', 404: 'unknown enrollment token' },
    handler: async (req, res) => {
      await deleteEnrollmentToken(deps, req.params.token_id, ctx.now(), metadataOf(ctx, req, res));
      res.status(204).end();
    },
  });
}

function registrationRoutes(ctx: ServiceContext, r: ApiRouter): void {
  const deps = agentDeps(ctx);
  const common = { security: ADMIN, tags: TAGS };
  r.route({
    ...common,
    method: 'get',
    path: '/admin/registrations',
    summary: 'registrations, oldest first, optionally of one status',
    query: RegistrationQuery,
    responses: { 200: Type.Object({ registrations: Type.Array(RegistrationOut) }), 422: 'invalid status' },
    handler: async (req, res) => {
      res.json({ registrations: await listRegistrations(ctx.pool, req.validQuery.status) });
    },
  });
  for (const [verb, verdict] of [
    ['approve', 'Approve'],
    ['reject', 'Reject'],
  ] as const) {
    r.route({
      ...common,
      method: 'post',
      path: `/admin/registrations/{registration_id}/${verb}`,
      summary: `${verdict === 'Approve' ? 'approve (does not provision or issue tokens)' : "reject (the node's agent gets 403 from then on)"}; allowed in any state`,
      params: RegistrationParams,
      body: NoteBody,
      responses: { 200: RegistrationOut, 404: 'unknown registration' },
      handler: async (req, res) => {
        const by = typeof res.locals.actor === 'string' ? res.locals.actor : 'admin';
        res.json(
          await decideRegistration(deps, req.params.registration_id, verdict, { note: req.body.note ?? null, by, now: ctx.now() }, metadataOf(ctx, req, res)),
        );
      },
    });
  }
}
