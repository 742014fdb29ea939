import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from '../../infra/logger.js';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** The request id: `X-Request-Id` when sane, else a new UUID; echoed in the response header. */
export function requestIdOf(req: IncomingMessage, res: ServerResponse): string {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', id);
  return id;
}

/** Writes that machines send all the time (agent reports, the identity's name lookups at the replica): not worth an info line each. */
const MACHINE_WRITES = /^\/(control\/v1|api\/v1)\/agent\/|^\/registry\/v1\/names/;

/**
 * The level of a finished request's access line: 5xx error, 4xx info, a
 * successful write (not GET, HEAD or OPTIONS) by a person or a script info, the
 * rest (reads, machine reports) debug. A 503 is warn: during a database outage
 * every request answers it, and the outage itself is logged once as an error.
 */
export function accessLevel(status: number, method = 'GET', url = ''): 'error' | 'warn' | 'info' | 'debug' {
  if (status === 503) return 'warn';
  if (status >= 500) return 'error';
  if (status >= 400) return 'info';
  return method === 'GET' || method === 'HEAD' || method === 'OPTIONS' || MACHINE_WRITES.test(url) ? 'debug' : 'info';
}

/** Marks a request whose access line this logger writes, so pino-http further down leaves it alone. */
const LOGGED = Symbol('access-logged');

export const alreadyLogged = (req: IncomingMessage): boolean => (req as IncomingMessage & { [LOGGED]?: true })[LOGGED] === true;

/**
 * A lean access log for hot anonymous GETs (`/public/*`) that sit in front of
 * the common front (`createServiceApp`): the same request id and the same line
 * as pino-http (`{req: {id, method, url}, res: {statusCode}, responseTime}`,
 * "request completed", level by status), but no per-request child logger and
 * nothing built unless the level is enabled. pino-http's per-request children
 * (bindings serialised and redacted on every request) cost these routes about
 * a fifth of their throughput while writing nothing at the default level.
 */
export function leanAccessLog(log: Logger): RequestHandler {
  return (req, res, next) => {
    const id = requestIdOf(req, res);
    (req as unknown as { id: string }).id = id;
    (req as IncomingMessage & { [LOGGED]?: true })[LOGGED] = true;
    const start = Date.now();
    const done = () => {
      res.removeListener('finish', done);
      res.removeListener('close', done);
      const level = accessLevel(res.statusCode, req.method, req.originalUrl);
      if (!log.isLevelEnabled(level)) return;
      const line = { req: { id, method: req.method, url: req.originalUrl }, res: { statusCode: res.statusCode }, responseTime: Date.now() - start };
      log[level](line, res.writableFinished ? 'request completed' : 'request aborted');
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}
