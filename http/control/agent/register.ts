import { Type } from '@sinclair/typebox';
import { registerAgent } from '../../../commands/registrations.js';
import { TooManyRequests } from '../../../domain/errors.js';
import { rateLimit } from '../../../infra/rate-limit.js';
import type { ServiceContext } from '../../shared/context.js';
import { requestMetadata } from '../../shared/metadata.js';
import { ApiRouter } from '../../shared/routes.js';
import { agentDeps } from './tokens.js';

const Str = (max: number) => Type.String({ minLength: 1, maxLength: max });

export const RegisterBody = Type.Object(
  {
    enrollment_token: Type.String({ minLength: 1, maxLength: 1024, description: 'the global bootstrap token or a one-time enrollment token' }),
    requested_node_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }),
    inventory: Type.Object(
      {
        hostname: Str(253),
        os: Str(128),
        arch: Str(64),
        has_systemd: Type.Boolean(),
        capabilities: Type.Array(Str(64), { maxItems: 64 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const Nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(t: T) => Type.Union([t, Type.Null()]);

export const RegisterResponse = Type.Object({
  status: Type.Union([Type.Literal('accepted'), Type.Literal('pending-approval')], {
    description: '`accepted` with a token, or `pending-approval` (retry later; the enrollment token is not consumed)',
  }),
  node_id: Type.String({ description: 'the node registered' }),
  agent_id: { ...Nullable(Type.String()), description: 'the agent id, or null while pending' },
  agent_token: Nullable(Type.String({ description: '`<token_id>.<secret>`, shown once; null while pending' })),
  desired_state_generation: { ...Nullable(Type.Integer()), description: 'the generation to fetch, or null while pending' },
  message: Type.String({ description: 'what happened, for the agent log' }),
});

/**
 * Registrations per client address: 600 in 10 minutes (one a second on average).
 * An agent retrying `pending-approval` with backoff stays far below; a fleet of
 * dozens behind one NAT still fits; a holder of the bootstrap token cannot flood
 * the registration list.
 */
export const REGISTER_LIMIT = { limit: 600, windowSeconds: 600 } as const;

/** `POST /agent/register`: no Bearer; the enrollment token travels in the body. */
export function agentRegisterRoutes(ctx: ServiceContext): ApiRouter {
  // A registration writes the node stream through the node-write pipeline, which rings the doorbell (never, here: it publishes nothing).
  const deps = { ...agentDeps(ctx), doorbell: ctx.doorbell };
  const perAddress = rateLimit(ctx.pool, { pool: 'agent-register', ...REGISTER_LIMIT });
  const r = new ApiRouter('/control/v1');
  r.route({
    method: 'post',
    path: '/agent/register',
    summary: 'register an agent: accepted with an agent token, or pending-approval (retry later)',
    tags: ['agent'],
    body: RegisterBody,
    responses: {
      200: RegisterResponse,
      401: 'invalid enrollment token, or a node-bound token for another node',
      403: 'node rejected by an administrator',
      422: 'invalid field',
      429: '`too many attempts`: more than 600 registrations from one address in 10 minutes',
    },
    handler: async (req, res) => {
      res.locals.actor = `agent-register:${req.body.requested_node_id}`;
      const metadata = requestMetadata(req, res, ctx.now());
      if (!(await perAddress.take(metadata.clientAddress ?? 'unknown', ctx.now()))) throw new TooManyRequests('too many attempts');
      const answer = await registerAgent(
        deps,
        { ...req.body, client_address: metadata.clientAddress ?? null, bootstrap_token: ctx.config.bootstrapEnrollmentToken, now: ctx.now() },
        metadata,
      );
      res.json(answer);
    },
  });
  return r;
}
