import type { RequestHandler, Response } from 'express';
import { InvalidSession, verifySession, type SessionClaims } from '../../commands/identity/sessions.js';
import type { ServiceContext } from '../shared/context.js';
import { IDENTITY_ERROR, identityError } from './errors.js';
import { bearerOf } from '../shared/bearer.js';

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
    const token = bearerOf(req.headers.authorization);
    if (!token) return refuse(res, next, SESSION_REQUIRED);
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

/**
 * RFC 6750 §3.1: a request without a bearer token gets the challenge without an
 * error code; a token that does not verify gets `error="invalid_token"`. The body
 * is `invalid_token` in both cases (the identity code of a 401).
 */
function refuse(res: Response, next: (err: unknown) => void, detail: string, error?: 'invalid_token'): void {
  res.setHeader('WWW-Authenticate', error ? `Bearer realm="dn42-identity", error="${error}"` : 'Bearer realm="dn42-identity"');
  next(identityError(401, detail, IDENTITY_ERROR.invalidToken));
}

/** The verified claims of the request; only after `requireSession`. */
export function sessionOf(res: Response): SessionClaims {
  const claims = res.locals.session as SessionClaims | undefined;
  if (!claims) throw new Error('sessionOf called on a route without requireSession');
  return claims;
}
