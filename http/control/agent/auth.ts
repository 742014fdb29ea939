import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { parseAgentToken } from '../../../domain/agent/secrets.js';
import { sha256Hex } from '../../../domain/sha256.js';
import type { Queryable } from '../../../infra/db/pool.js';
import { findAgentTokens } from '../../../projections/agents/queries.js';
import { batchedReads, perOwner } from '../../shared/batch.js';
import type { ServiceContext } from '../../shared/context.js';
import { HttpError } from '../../shared/errors.js';
import { bearerOf } from '../auth/require-admin.js';

/**
 * Token rows by id, read in batches per pool: after a fleet-wide write every
 * agent pulls at once, and their token reads go out as a few queries instead
 * of one each (`batchedReads`).
 */
const tokenRows = perOwner((db: Queryable) =>
  batchedReads(async (ids: readonly string[]) => {
    const rows = await findAgentTokens(db, ids);
    return ids.map((id) => rows.get(id));
  }),
);

/** Who an agent Bearer token speaks for. */
export interface AgentPrincipal {
  node_id: string;
  token_id: string;
  agent_id: string | null;
}

export const MISSING_AGENT_TOKEN = 'missing bearer token';
export const INVALID_AGENT_TOKEN = 'invalid or expired agent token';

/**
 * Resolves `Authorization: Bearer agt_<suffix>.<secret>` (the header value as given, or undefined).
 * Null when the token is unknown, wrong, revoked or expired. One primary-key read
 * of the `agents` read model (batched with concurrent requests' reads); the secret's sha256 is compared in constant time,
 * and expiry against the service clock.
 */
export async function resolveAgentToken(ctx: ServiceContext, authorization: string | undefined): Promise<AgentPrincipal | null> {
  return (await resolveAgentGrant(ctx, authorization))?.agent ?? null;
}

/** `resolveAgentToken` with the token's expiry, which a long-lived socket has to watch. */
export async function resolveAgentGrant(
  ctx: ServiceContext,
  authorization: string | undefined,
): Promise<{ agent: AgentPrincipal; expires_at: Date | null } | null> {
  const bearer = bearerOf(authorization);
  const parsed = bearer === undefined ? undefined : parseAgentToken(bearer);
  if (!parsed) return null;
  const row = await tokenRows(ctx.pool)(parsed.tokenId);
  if (!row || row.revoked_at !== null) return null;
  if (row.expires_at !== null && row.expires_at.getTime() <= ctx.now().getTime()) return null;
  if (!timingSafeEqual(Buffer.from(sha256Hex(parsed.secret), 'hex'), Buffer.from(row.secret_sha256, 'hex'))) return null;
  return { agent: { node_id: row.node_id, token_id: row.token_id, agent_id: row.agent_id }, expires_at: row.expires_at };
}

/**
 * Express middleware for `/agent/*` HTTP routes: 401 when unresolvable; sets `res.locals.agent: AgentPrincipal`.
 * Resolves once per request: a route guarded twice (the routing table's body parser
 * and its router) finds the principal already set.
 */
export function requireAgent(ctx: ServiceContext): RequestHandler {
  return async (req, res, next) => {
    if (res.locals.agent) return next();
    try {
      if (bearerOf(req.headers.authorization) === undefined) return next(new HttpError(401, MISSING_AGENT_TOKEN));
      const agent = await resolveAgentToken(ctx, req.headers.authorization);
      if (!agent) return next(new HttpError(401, INVALID_AGENT_TOKEN));
      res.locals.agent = agent;
      res.locals.actor = `agent:${agent.node_id}`;
      next();
    } catch (err) {
      next(err);
    }
  };
}
