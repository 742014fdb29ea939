import express from 'express';
import { registryClient } from '../../../infra/registry/client.js';
import type { ServiceContext } from '../../shared/context.js';
import { requestMetadata } from '../../shared/metadata.js';
import type { ProviderDeps } from './configuration.js';
import { withOidcMetadata } from './metadata.js';
import { OidcProviders } from './provider.js';

/** The provider's endpoints this service exposes; everything else of oidc-provider stays unreachable. */
export const PROTOCOL_PATHS = ['/.well-known/openid-configuration', '/token', '/userinfo'];

/** What the provider, its adapter and the approval need, built once per app. */
export function providerDeps(ctx: ServiceContext): ProviderDeps {
  return {
    config: ctx.config,
    store: ctx.store,
    pool: ctx.pool,
    log: ctx.log,
    now: ctx.now,
    registry: registryClient(ctx.config, ctx.log),
    settle: ctx.store.transactional ? undefined : () => ctx.projections.catchUp(['oidc']),
  };
}

/**
 * Discovery, token and UserInfo at the root, handed to oidc-provider. Only these
 * exact paths reach it: its own authorization endpoint (and logout, PAR,
 * device, registration) can never be hit, so `/authorize` stays the page's and
 * every authorization goes through authorize-context and approve.
 */
export function oidcProtocolRoutes(ctx: ServiceContext, providers: OidcProviders): express.Router {
  const router = express.Router();
  router.all(PROTOCOL_PATHS, (req, res, next) => {
    withOidcMetadata(requestMetadata(req, res, ctx.now()), () => providers.handle(req, res)).catch(next);
  });
  return router;
}
