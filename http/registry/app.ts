import type { Express } from 'express';
import { createServiceApp, finishServiceApp } from '../shared/app.js';
import type { ServiceContext } from '../shared/context.js';
import { healthz } from '../shared/healthz.js';
import { openApiDocument, type ApiRouter } from '../shared/routes.js';

export const REGISTRY_PREFIX = '/registry/v1';

/** The registry replica: a read-only copy of the dn42 registry for sister services. */
export function createRegistryApp(ctx: ServiceContext): Express {
  const app = createServiceApp('registry', ctx.log);
  app.get('/healthz', healthz(ctx.pool));
  const routers: ApiRouter[] = [];
  for (const r of routers) app.use(REGISTRY_PREFIX, r.router);
  const document = openApiDocument({ title: 'dn42-control registry replica', version: '1' }, routers);
  app.get(`${REGISTRY_PREFIX}/openapi.json`, (_req, res) => {
    res.json(document);
  });
  return finishServiceApp(app, 'control', ctx.log);
}
