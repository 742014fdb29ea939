import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { bearerOf } from '../shared/bearer.js';
import type { ServiceContext } from '../shared/context.js';
import { HttpError } from '../shared/errors.js';

/**
 * Every replica endpoint but `/healthz` wants `Authorization: Bearer
 * <REGISTRY_SERVICE_TOKEN>`. With no token configured everything answers 403:
 * the replica fails closed.
 */
export function requireServiceToken(ctx: ServiceContext): RequestHandler {
  const configured = ctx.config.registryServiceToken;
  const digest = configured ? sha256(configured) : undefined;
  return (req, res, next) => {
    if (!digest) return next(new HttpError(403, 'registry replica access is disabled: no service token configured'));
    const bearer = bearerOf(req.headers.authorization);
    if (bearer === undefined) return next(new HttpError(401, 'missing bearer token'));
    if (!timingSafeEqual(sha256(bearer), digest)) return next(new HttpError(401, 'invalid service token'));
    res.locals.actor = 'service';
    next();
  };
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
