// STUB — owned by the agent-token helper, who replaces the bodies. Signatures are the agreed interface.
import type { RequestHandler } from 'express';
import type { ServiceContext } from '../../shared/context.js';

/** Who an agent Bearer token speaks for. */
export interface AgentPrincipal {
  node_id: string;
  token_id: string;
  agent_id: string | null;
}

/**
 * Resolves `Authorization: Bearer agt_<suffix>.<secret>` (the header value as given, or undefined).
 * Null when the token is unknown, wrong, revoked or expired.
 */
export async function resolveAgentToken(_ctx: ServiceContext, _authorization: string | undefined): Promise<AgentPrincipal | null> {
  throw new Error('resolveAgentToken: not implemented yet');
}

/** Express middleware for `/agent/*` HTTP routes: 401 when unresolvable; sets `res.locals.agent: AgentPrincipal`. */
export function requireAgent(_ctx: ServiceContext): RequestHandler {
  return (_req, _res, next) => next(new Error('requireAgent: not implemented yet'));
}
