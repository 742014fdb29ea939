import { randomUUID } from 'node:crypto';
import express, { type Express, type RequestHandler } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../../infra/logger.js';
import { errorHandler, notFoundHandler, type ErrorStyle } from './errors.js';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * The common front of every service: request ids (taken from `X-Request-Id` when
 * sane, else made), one pino child per request, JSON bodies. Routes go between
 * `createServiceApp` and `finishServiceApp`.
 */
/** A POST route whose JSON body may exceed the default limit; `before` (authentication) runs ahead of parsing it. */
export interface LargeJsonRoute {
  path: string;
  limitBytes: number;
  before?: RequestHandler[];
}

/** The JSON body limit of every route not listed in `largeJsonRoutes`. */
export const DEFAULT_JSON_LIMIT_BYTES = 2 * 1024 * 1024;

export function createServiceApp(service: string, log: Logger, options: { largeJsonRoutes?: readonly LargeJsonRoute[] } = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.set('query parser', 'simple');
  app.use(
    pinoHttp({
      logger: log.child({ service }),
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'info' : 'debug'),
      serializers: { req: (req) => ({ id: req.id, method: req.method, url: req.url }), res: (res) => ({ statusCode: res.statusCode }) },
    }),
  );
  // A listed route parses its own body first; the generic parser then leaves a parsed body alone.
  for (const route of options.largeJsonRoutes ?? []) app.post(route.path, ...(route.before ?? []), express.json({ limit: route.limitBytes }));
  app.use(express.json({ limit: DEFAULT_JSON_LIMIT_BYTES }));
  return app;
}

export function finishServiceApp(app: Express, style: ErrorStyle, log: Logger): Express {
  app.use(notFoundHandler(style));
  app.use(errorHandler(style, log));
  return app;
}
