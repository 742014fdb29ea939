import type { Express } from 'express';
import { createServiceApp } from '../shared/app.js';
import type { ServiceContext } from '../shared/context.js';
import { healthz } from '../shared/healthz.js';
import { openApiDocument, type ApiRouter } from '../shared/routes.js';
import { referenceRoutes } from '../shared/reference.js';
import { keySecret } from '../../infra/identity/keys.js';
import { finishIdentityApp } from './errors.js';
import { jwksRoutes } from './jwks.js';
import { oidcRoutes } from './oidc-routes.js';
import { pageRoutes } from './page.js';
import { passkeyRoutes } from './passkeys.js';
import { sessionRoutes } from './session.js';
import { verificationRouter } from './verification-routes.js';
import { serviceMetrics } from '../shared/metrics.js';

export const IDENTITY_PREFIX = '/api/v1';

/** The identity service: ASN verification, sessions, passkeys, OIDC provider. */
export function createIdentityApp(ctx: ServiceContext): Express {
  // A public issuer without IDENTITY_KEY_SECRET stops the identity role here, at start.
  keySecret(ctx.config);
  const app = createServiceApp('identity', ctx.log, { trustedProxies: ctx.config.trustedProxies, metrics: serviceMetrics(ctx, 'identity') });
  app.get('/healthz', healthz(ctx.pool));
  // The authorization page (static files) comes before the provider, which owns the rest of the root.
  app.use(pageRoutes(ctx.config));
  app.use(referenceRoutes(IDENTITY_PREFIX));
  const oidc = oidcRoutes(ctx, IDENTITY_PREFIX);
  const routers: ApiRouter[] = [sessionRoutes(ctx, IDENTITY_PREFIX), passkeyRoutes(ctx, IDENTITY_PREFIX), verificationRouter(ctx, IDENTITY_PREFIX), oidc.api];
  for (const r of routers) app.use(IDENTITY_PREFIX, r.router);
  // Protocol endpoints live at the root (the issuer is the service's root address).
  const rootRouters: ApiRouter[] = [jwksRoutes(ctx)];
  for (const r of rootRouters) app.use(r.router);
  // oidc-provider: discovery, token, UserInfo (the JWKS route above publishes the keys it signs with).
  app.use(oidc.protocol);
  const document = openApiDocument(
    {
      title: 'dn42-control identity service',
      version: '1',
      errorStyle: 'identity',
      securitySchemes: {
        session: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'session JWT (EdDSA) from challenge submit or passkey login' },
        admin: { type: 'http', scheme: 'bearer', description: 'IDENTITY_ADMIN_TOKEN' },
      },
    },
    [...routers, ...rootRouters],
  );
  app.get(`${IDENTITY_PREFIX}/openapi.json`, (_req, res) => {
    res.json(document);
  });
  return finishIdentityApp(app, ctx.log);
}
