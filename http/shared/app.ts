import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../../infra/logger.js';
import { errorHandler, notFoundHandler, type ErrorStyle } from './errors.js';

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * The common front of every service: request ids (taken from `X-Request-Id` when
 * sane, else made), one pino child per request, JSON bodies. Routes go between
 * `createServiceApp` and `finishServiceApp`.
 */
export function createServiceApp(service: string, log: Logger): Express {
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
  app.use(express.json({ limit: '2mb' }));
  return app;
}

export function finishServiceApp(app: Express, style: ErrorStyle, log: Logger): Express {
  app.use(notFoundHandler(style));
  app.use(errorHandler(style, log));
  return app;
}
