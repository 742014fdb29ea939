import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../../infra/logger.js';
import { TRUSTED_PROXIES_LOCAL, TrustedProxies } from './client-address.js';
import { accessLevel, alreadyLogged, requestIdOf } from './access-log.js';
import { errorHandler, notFoundHandler, type ErrorStyle } from './errors.js';
import type { ServiceMetrics } from '../../infra/metrics/service.js';
import { countRequests, metricsEndpoint } from './metrics.js';

export interface ServiceAppOptions {
  /**
   * Mounts hot routes ahead of the common front (given the service's logger):
   * they bring their own lean access log (`leanAccessLog`) and skip every
   * router after them. For cached anonymous GETs only.
   */
  front?: (app: Express, log: Logger) => void;
  /** `TRUSTED_PROXIES`: the proxies whose forwarding headers `clientAddress` believes (default none). */
  trustedProxies?: readonly string[];
  /** The service's metrics: every request is counted, and `GET /metrics` answers them (`token`: `METRICS_TOKEN`). */
  metrics?: { service: ServiceMetrics; token: string | undefined };
}

/**
 * The common front of every service: request ids (taken from `X-Request-Id` when
 * sane, else made), one pino child per request. Routes go between
 * `createServiceApp` and `finishServiceApp`.
 */
export function createServiceApp(service: string, log: Logger, options: ServiceAppOptions = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.set('query parser', 'simple');
  app.locals[TRUSTED_PROXIES_LOCAL] = new TrustedProxies(options.trustedProxies);
  const serviceLog = log.child({ service });
  // Ahead of everything, the hot front routes included, so every request is counted.
  if (options.metrics) {
    app.use(countRequests(options.metrics.service));
    app.get('/metrics', metricsEndpoint(options.metrics.service, options.metrics.token));
  }
  options.front?.(app, serviceLog);
  app.use(
    pinoHttp({
      logger: serviceLog,
      genReqId: (req, res) => requestIdOf(req, res),
      // A request the lean access log in front already logs (one that passed the front routes unanswered).
      autoLogging: { ignore: alreadyLogged },
      customLogLevel: (req, res, err) => (err ? 'error' : accessLevel(res.statusCode, req.method, (req as { originalUrl?: string }).originalUrl ?? req.url)),
      serializers: { req: (req) => ({ id: req.id, method: req.method, url: req.url }), res: (res) => ({ statusCode: res.statusCode }) },
    }),
  );
  // No body parser here: each route parses its own body against its own limit (`ApiRouter.route`, `bodyLimit`).
  return app;
}

export function finishServiceApp(app: Express, style: ErrorStyle, log: Logger): Express {
  app.use(notFoundHandler(style));
  app.use(errorHandler(style, log));
  return app;
}
