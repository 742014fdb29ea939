import type { Request, RequestHandler, Response } from 'express';
import type { ServiceContext } from '../../shared/context.js';
import { HttpError } from '../../shared/errors.js';
import { ApiRouter } from '../../shared/routes.js';
import { requireAgent, type AgentPrincipal } from './auth.js';

export const AGENT = ['agent'];
export const AGENT_TAGS = ['node agent'];

/**
 * Where a route's node comes from, checked against the token's node once per request:
 * - `body`: the body's `node_id`, checked before the body is validated (the contract's
 *   order: 401, then 403, and only then 422, so a token holder cannot make the server
 *   validate bodies for another node);
 * - `query`: an optional `node_id` query parameter, checked after the query is
 *   validated; absent, the token's node is meant;
 * - `token`: the token's node, nothing to check.
 */
export type AgentNodeSource = 'body' | 'query' | 'token';

/** The node the request speaks for, checked against the token's (set by the agent router's step). */
export function agentNode(res: Response): string {
  const nodeId = res.locals.agentNode as string | undefined;
  if (nodeId === undefined) throw new Error('agentNode: the agent router did not check this request');
  return nodeId;
}

/** The token's principal (`requireAgent` has run on every agent route). */
export const agentOf = (res: Response): AgentPrincipal => res.locals.agent as AgentPrincipal;

/** The node must be the token's node (403 otherwise); remembered for the handler (`agentNode`). */
function checkNode(res: Response, nodeId: string): void {
  if (agentOf(res).node_id !== nodeId) throw new HttpError(403, `agent token is not bound to node ${nodeId}`);
  res.locals.agentNode = nodeId;
}

/** `body` routes: the body's `node_id` as soon as it is parsed (a non-string one is left to the validation's 422). */
const bodyNodeFirst: RequestHandler = (req, res, next) => {
  const nodeId = (req.body as { node_id?: unknown } | undefined)?.node_id;
  if (typeof nodeId !== 'string') return next();
  try {
    checkNode(res, nodeId);
    next();
  } catch (err) {
    next(err);
  }
};

/** `query` and `token` routes, once the query is validated. */
function nodeOfQuery(req: Request & { validQuery: Record<string, unknown> }, res: Response): void {
  const given = req.validQuery.node_id;
  checkNode(res, typeof given === 'string' ? given : agentOf(res).node_id);
}

/**
 * A router for agent routes: `requireAgent` runs on exactly these paths, before the
 * body is parsed (so 401 comes first and no anonymous body is read), then the node
 * check of `nodeFrom`, once; handlers read the checked node with `agentNode(res)`.
 */
export function agentRouter(ctx: ServiceContext, paths: readonly string[], nodeFrom: AgentNodeSource): ApiRouter {
  const r =
    nodeFrom === 'body'
      ? new ApiRouter('/control/v1', { afterBody: [bodyNodeFirst] })
      : new ApiRouter('/control/v1', { beforeHandler: nodeFrom === 'query' ? nodeOfQuery : (_req, res) => checkNode(res, agentOf(res).node_id) });
  r.router.use([...paths], requireAgent(ctx));
  return r;
}
