import type { RequestHandler } from 'express';
import { recordAudit } from '../../commands/audit.js';
import type { ServiceContext } from './context.js';
import { requestMetadata } from './metadata.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Records every write request with its final status code. It runs before
 * authentication, so refused requests are recorded too; the authenticator names
 * the actor in `res.locals.actor` when it knows one.
 */
export function auditWrites(ctx: ServiceContext): RequestHandler {
  return (req, res, next) => {
    if (!WRITES.has(req.method)) return next();
    const path = req.originalUrl.split('?')[0];
    res.on('finish', () => {
      const at = ctx.now();
      const metadata = requestMetadata(req, res, at);
      const actor = typeof res.locals.actor === 'string' ? res.locals.actor : `anonymous@${metadata.clientAddress}`;
      const detail = typeof res.locals.auditDetail === 'string' ? res.locals.auditDetail : null;
      // recordAudit names the entry's actor in the metadata too.
      ctx.background
        .run(recordAudit(ctx.store, { actor, method: req.method, path, status_code: res.statusCode, detail }, metadata, at))
        .catch((err) => ctx.log.error({ err, requestId: req.id, path }, 'audit write failed'));
    });
    next();
  };
}
