import type { Router } from 'express';
import type { ServiceContext } from '../shared/context.js';
import { ApiRouter } from '../shared/routes.js';
import { oauthClientRoutes } from './admin/oauth-clients.js';
import { registryRoutes } from './admin/registry.js';
import { requireIdentityAdmin } from './admin/require-admin.js';
import { approveRoute } from './oauth/approve.js';
import { authorizeContextRoute } from './oauth/authorize-context.js';
import { OidcProviders } from './oidc/provider.js';
import { oidcProtocolRoutes, providerDeps } from './oidc/routes.js';

/**
 * Issue 8's part of the identity service, sharing one provider host:
 * - `api` (under `/api/v1`): authorize-context and approve for the page, OAuth
 *   application administration and the registry sync trigger (admin token), and
 *   the registry status;
 * - `protocol` (at the root): discovery, token and UserInfo of oidc-provider.
 */
export function oidcRoutes(ctx: ServiceContext, prefix: string): { api: ApiRouter; protocol: Router } {
  const deps = providerDeps(ctx);
  const providers = new OidcProviders(deps);
  const api = new ApiRouter(prefix);
  const admin = requireIdentityAdmin(ctx);
  api.router.use('/admin', admin);
  api.router.post('/registry/sync', admin);
  authorizeContextRoute(api, ctx);
  approveRoute(api, ctx, providers, deps);
  oauthClientRoutes(api, ctx, deps);
  registryRoutes(api, ctx);
  return { api, protocol: oidcProtocolRoutes(ctx, providers) };
}
