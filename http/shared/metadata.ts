import type { Request, Response } from 'express';
import type { EventMetadata } from '../../infra/eventstore/types.js';
import { clientAddress } from './client-address.js';

/**
 * The metadata every event of a request carries: who (the authenticated actor the
 * auth middleware put in `res.locals.actor`), which request, from where, and what
 * caused it (the request itself unless the client names a causing message).
 */
export function requestMetadata(req: Request, res: Response, now: Date): EventMetadata {
  const requestId = String(req.id);
  const causation = req.headers['x-causation-id'];
  return {
    actor: typeof res.locals.actor === 'string' ? res.locals.actor : 'anonymous',
    requestId,
    clientAddress: clientAddress(req),
    causationId: typeof causation === 'string' && /^[\w.:-]{1,128}$/.test(causation) ? causation : requestId,
    correlationId: requestId,
    recordedAt: now.toISOString(),
  };
}
