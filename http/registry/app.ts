import type { Express } from 'express';
import { RegistrySyncer } from '../../infra/registry/sync.js';
import { createServiceApp, finishServiceApp } from '../shared/app.js';
import type { ServiceContext } from '../shared/context.js';
import { healthz } from '../shared/healthz.js';
import { openApiDocument, type ApiRouter } from '../shared/routes.js';
import { referenceRoutes } from '../shared/reference.js';
import { asnRoutes } from './asns.js';
import { requireServiceToken } from './auth.js';
import { objectRoutes } from './objects.js';
import { roaRoutes } from './roas.js';
import { syncRoutes } from './sync.js';
import { serviceMetrics } from '../shared/metrics.js';
import { registrySyncAgeGauge } from '../../infra/metrics/registry-sync.js';
import { readState } from '../../infra/registry/store.js';

export const REGISTRY_PREFIX = '/registry/v1';

/**
 * The registry replica: a read-only copy of the dn42 registry for sister services.
 * `syncer` is given by tests (a short time bound, a pause before commit).
 */
export function createRegistryApp(ctx: ServiceContext, options: { syncer?: RegistrySyncer } = {}): Express {
  const metrics = serviceMetrics(ctx, 'registry');
  registrySyncAgeGauge(metrics.service.registry, ctx.log, async () => (await readState(ctx.pool))?.checkedAt ?? null, ctx.now);
  const app = createServiceApp('registry', ctx.log, { trustedProxies: ctx.config.trustedProxies, metrics });
  app.get('/healthz', healthz(ctx.pool));
  const syncer = options.syncer ?? new RegistrySyncer(ctx);
  const routers: ApiRouter[] = [
    syncRoutes(ctx, syncer, REGISTRY_PREFIX),
    asnRoutes(ctx, REGISTRY_PREFIX),
    objectRoutes(ctx, REGISTRY_PREFIX),
    roaRoutes(ctx, REGISTRY_PREFIX),
  ];
  const document = openApiDocument(
    {
      title: 'dn42-control registry replica',
      version: '1',
      errorStyle: 'control',
      securitySchemes: { service: { type: 'http', scheme: 'bearer', description: 'REGISTRY_SERVICE_TOKEN' } },
    },
    routers,
  );
  // The document describes the API and holds no registry data, so it stays readable without the token.
  app.get(`${REGISTRY_PREFIX}/openapi.json`, (_req, res) => {
    res.json(document);
  });
  // The reference page holds no data either: it reads the document above.
  app.use(referenceRoutes(REGISTRY_PREFIX));
  app.use(REGISTRY_PREFIX, requireServiceToken(ctx));
  for (const r of routers) app.use(REGISTRY_PREFIX, r.router);
  return finishServiceApp(app, 'control', ctx.log);
}
