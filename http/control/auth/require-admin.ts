import { timingSafeEqual, createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { HttpError } from '../../shared/errors.js';
import type { ServiceContext } from '../../shared/context.js';

/**
 * Guards `/admin/*` and `/ui/*`: the static admin token or an account session
 * token. No static token configured: every such route answers 403 (fails closed).
 * Names the actor in `res.locals.actor` for the audit log.
 */
export function requireAdmin(ctx: ServiceContext): RequestHandler {
  const configured = ctx.config.adminToken;
  const staticDigest = configured ? sha256(configured) : undefined;
  return (req, res, next) => {
    if (!staticDigest) return next(new HttpError(403, 'admin access is disabled: no admin token configured'));
    const bearer = bearerOf(req.headers.authorization);
    if (bearer === undefined) return next(new HttpError(401, 'missing bearer token'));
    if (timingSafeEqual(sha256(bearer), staticDigest)) {
      res.locals.actor = 'admin';
      return next();
    }
    next(new HttpError(401, 'invalid or expired token'));
  };
}

export function bearerOf(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
