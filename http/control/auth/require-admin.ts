import { timingSafeEqual, createHash } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { findLiveSession } from '../../../projections/accounts/queries.js';
import { bearerOf } from '../../shared/bearer.js';
import { HttpError } from '../../shared/errors.js';
import type { ServiceContext } from '../../shared/context.js';

/** Who authenticated a request: the static admin token or an account session. */
export type Principal = { kind: 'static' } | { kind: 'account'; username: string; sessionId: string };

export const ADMIN_LOCKED = 'admin access is disabled: no admin token configured';
export const MISSING_BEARER = 'missing bearer token';
export const INVALID_TOKEN = 'invalid or expired token';

// The agent channel's guard imports it from here.
export { bearerOf };

/**
 * Guards `/admin/*`, `/ui/*` and `/auth/password`: the static admin token or a
 * live account session token, accepted alike. No static token configured: every
 * such route answers 403 (fails closed), sessions included. Names the actor in
 * `res.locals.actor` for the audit log and the principal in `res.locals.principal`.
 */
export function requireAdmin(ctx: ServiceContext): RequestHandler {
  const configured = ctx.config.adminToken;
  const staticDigest = configured ? sha256(configured) : undefined;
  return async (req, res, next) => {
    if (!staticDigest) return refuse(res, next, 403, ADMIN_LOCKED);
    const bearer = bearerOf(req.headers.authorization);
    if (bearer === undefined) return refuse(res, next, 401, MISSING_BEARER);
    const digest = sha256(bearer);
    if (timingSafeEqual(digest, staticDigest)) {
      authenticated(res, 'admin', { kind: 'static' });
      return next();
    }
    try {
      // Sessions are found by the sha256 of their token; the token is never stored.
      const session = await findLiveSession(ctx.pool, digest.toString('hex'), ctx.now());
      if (!session) return refuse(res, next, 401, INVALID_TOKEN);
      authenticated(res, session.username, { kind: 'account', username: session.username, sessionId: session.sessionId });
      next();
    } catch (err) {
      next(err);
    }
  };
}

export function principalOf(res: Response): Principal | undefined {
  return res.locals.principal as Principal | undefined;
}

/** A guard for routes that must answer 403 while the admin surface is locked (the login). */
export function requireAdminSurface(ctx: ServiceContext): RequestHandler {
  return (_req, res, next) => (ctx.config.adminToken ? next() : refuse(res, next, 403, ADMIN_LOCKED));
}

function authenticated(res: Response, actor: string, principal: Principal): void {
  res.locals.actor = actor;
  res.locals.principal = principal;
}

function refuse(res: Response, next: (err: unknown) => void, status: number, detail: string): void {
  res.locals.auditDetail = detail;
  next(new HttpError(status, detail));
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
