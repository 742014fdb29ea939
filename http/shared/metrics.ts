import { createHash, timingSafeEqual } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Request, RequestHandler, Response } from 'express';
import type { ServiceMetrics } from '../../infra/metrics/service.js';
import { bearerOf } from './bearer.js';
import type { ServiceContext } from './context.js';

/** The label of requests no route answered (404s, probes of random paths, authentication refusals ahead of the routes): one value, whatever the path. */
export const UNMATCHED_ROUTE = '(no route)';

/** A route template as the OpenAPI documents write it: `/nodes/:node_id` is `/nodes/{node_id}`. */
const templates = new Map<string, string>();
function openApiStyle(path: string): string {
  let t = templates.get(path);
  if (t === undefined) templates.set(path, (t = path.replace(/:(\w+)/g, '{$1}')));
  return t;
}

const ROUTE_LABEL = Symbol('metrics-route');

/** Names the route template a request matched (`ApiRouter` does it for every route it declares: the OpenAPI path). */
export function labelRoute(res: Response, template: string): void {
  (res as Response & { [ROUTE_LABEL]?: string })[ROUTE_LABEL] = template;
}

/**
 * The route label of a request: the template of the route that answered it, so
 * the label's values are bounded by the code, never by what clients send. An
 * `ApiRouter` route names its OpenAPI path (`labelRoute`); another route is its
 * router's mount path and its path as written in the code; a request answered by
 * middleware under a mount path (static files) is `<mount>/*`; one that nothing
 * matched, or that a middleware refused before any route, is `(no route)`.
 */
export function routeLabel(req: Request, res: Response): string {
  const named = (res as Response & { [ROUTE_LABEL]?: string })[ROUTE_LABEL];
  if (named !== undefined) return named;
  const route = (req as Request & { route?: { path?: unknown } }).route;
  const path = route?.path;
  if (typeof path === 'string') return openApiStyle(req.baseUrl + path);
  // A route over a list of literal paths (oidc-provider's protocol endpoints): the one matched.
  if (Array.isArray(path)) return openApiStyle(req.baseUrl + (path.includes(req.path) ? req.path : path.join('|')));
  return req.baseUrl ? `${req.baseUrl}/*` : UNMATCHED_ROUTE;
}

/** Counts and times every request of the service, once, when its response ends (or the client goes away). */
export function countRequests(metrics: ServiceMetrics): RequestHandler {
  return (req, res, next) => {
    const start = performance.now();
    const done = () => {
      res.removeListener('finish', done);
      res.removeListener('close', done);
      metrics.observeRequest(req.method, routeLabel(req, res), res.statusCode, (performance.now() - start) / 1000);
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}

/** Headers a reverse proxy adds: a request carrying one came through a proxy, even from a loopback peer. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-real-ip', 'cf-connecting-ip'];

function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const plain = address.startsWith('::ffff:') ? address.slice(7) : address;
  return plain === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(plain);
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * `GET /metrics` (Prometheus text format), see docs/decisions.md, Operations:
 * with `METRICS_TOKEN` set, to `Authorization: Bearer <METRICS_TOKEN>` only (else
 * 401, or with `hidden` what any other path answers); without it, to loopback
 * peers whose request carries no forwarding header only, and to everyone else it
 * does not exist (the service's 404). A reverse proxy on the same host therefore
 * does not publish it by accident.
 */
export function metricsEndpoint(metrics: ServiceMetrics, token: string | undefined, options: { hidden?: boolean } = {}): RequestHandler {
  const expected = token === undefined ? undefined : digest(token);
  return (req: Request, res: Response, next) => {
    if (expected) {
      const presented = bearerOf(req.headers.authorization);
      if (!presented || !timingSafeEqual(digest(presented), expected)) {
        // `hidden`: a wrong token gets what any other path gets (the home site's contract answers every path).
        if (options.hidden) return next();
        res.status(401).setHeader('WWW-Authenticate', 'Bearer').type('text/plain').send('metrics token required\n');
        return;
      }
    } else if (!isLoopback(req.socket.remoteAddress) || FORWARDING_HEADERS.some((h) => req.headers[h] !== undefined)) {
      next();
      return;
    }
    metrics.exposition().then(
      (body) => {
        res.setHeader('Cache-Control', 'no-store');
        res.type(metrics.contentType).send(body);
      },
      (err: unknown) => next(err),
    );
  };
}

/** A service's metrics option for `createServiceApp`: a new registry of the system's metrics, and `METRICS_TOKEN`. */
export function serviceMetrics(ctx: Pick<ServiceContext, 'metrics' | 'config'>, name: string): { service: ServiceMetrics; token: string | undefined } {
  return { service: ctx.metrics.service(name), token: ctx.config.metricsToken };
}
