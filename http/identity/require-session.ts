import type { RequestHandler, Response } from 'express';
import { InvalidSession, verifySession, type SessionClaims } from '../../commands/identity/sessions.js';
import type { ServiceContext } from '../shared/context.js';
import { identityError } from './errors.js';

export const SESSION_REQUIRED = 'session token required';
export const SESSION_INVALID = 'invalid or expired session token';

/**
 * Guards the session endpoints (`/session`, passkey register/list/delete): an
 * `Authorization: Bearer <session JWT>` that verifies (EdDSA only) against the
 * published key set. Missing or invalid: 401 with a `WWW-Authenticate` challenge
 * (the contract leaves the status open). The claims go to `res.locals.session`,
 * the maintainer to `res.locals.actor` for event metadata.
 */
export function requireSession(ctx: ServiceContext): RequestHandler {
  return async (req, res, next) => {
    const token = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!token) return refuse(res, next, SESSION_REQUIRED, 'invalid_request');
    try {
      const claims = await verifySession(ctx, token);
      res.locals.session = claims;
      res.locals.actor = claims.mnt ? `mntner:${claims.mnt}` : `session:${claims.sub}`;
      next();
    } catch (err) {
      if (!(err instanceof InvalidSession)) return next(err);
      (req.log ?? ctx.log).info({ reason: err.reason, requestId: req.id }, 'session token refused');
      refuse(res, next, SESSION_INVALID, 'invalid_token');
    }
  };
}

function refuse(res: Response, next: (err: unknown) => void, detail: string, error: 'invalid_request' | 'invalid_token'): void {
  res.setHeader('WWW-Authenticate', `Bearer realm="dn42-identity", error="${error}"`);
  next(identityError(401, detail));
}

/** The verified claims of the request; only after `requireSession`. */
export function sessionOf(res: Response): SessionClaims {
  const claims = res.locals.session as SessionClaims | undefined;
  if (!claims) throw new Error('sessionOf called on a route without requireSession');
  return claims;
}
