import type { Express } from 'express';
import { createServiceApp } from '../shared/app.js';
import type { ServiceContext } from '../shared/context.js';
import { healthz } from '../shared/healthz.js';
import { openApiDocument, type ApiRouter } from '../shared/routes.js';
import { finishIdentityApp } from './errors.js';

export const IDENTITY_PREFIX = '/api/v1';

/** The identity service: ASN verification, sessions, passkeys, OIDC provider. */
export function createIdentityApp(ctx: ServiceContext): Express {
  const app = createServiceApp('identity', ctx.log);
  app.get('/healthz', healthz(ctx.pool));
  const routers: ApiRouter[] = [];
  for (const r of routers) app.use(IDENTITY_PREFIX, r.router);
  const document = openApiDocument({ title: 'dn42-control identity service', version: '1' }, routers);
  app.get(`${IDENTITY_PREFIX}/openapi.json`, (_req, res) => {
    res.json(document);
  });
  return finishIdentityApp(app, ctx.log);
}
