import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { sha256Hex } from '../../../domain/sha256.js';
import { bearerOf } from '../../shared/bearer.js';
import type { ServiceContext } from '../../shared/context.js';
import { identityError } from '../errors.js';

export const ADMIN_DISABLED = 'identity administration is disabled: IDENTITY_ADMIN_TOKEN is not configured';
export const ADMIN_TOKEN_REQUIRED = 'admin token required';
export const ADMIN_TOKEN_INVALID = 'invalid admin token';

/**
 * The identity service's administration (OAuth applications, registry sync):
 * `Authorization: Bearer <IDENTITY_ADMIN_TOKEN>`. No token configured: 403 for
 * everyone (fails closed); missing or wrong: 401. Compared as sha256 digests in
 * constant time, so neither the length nor a prefix of the token leaks.
 */
export function requireIdentityAdmin(ctx: ServiceContext): RequestHandler {
  const configured = ctx.config.identityAdminToken;
  const digest = configured ? Buffer.from(sha256Hex(configured)) : undefined;
  return (req, res, next) => {
    if (!digest) return next(identityError(403, ADMIN_DISABLED));
    const bearer = bearerOf(req.headers.authorization);
    if (bearer === undefined) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="dn42-identity-admin"');
      return next(identityError(401, ADMIN_TOKEN_REQUIRED));
    }
    if (!timingSafeEqual(Buffer.from(sha256Hex(bearer)), digest)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="dn42-identity-admin", error="invalid_token"');
      return next(identityError(401, ADMIN_TOKEN_INVALID));
    }
    res.locals.actor = 'identity-admin';
    next();
  };
}
