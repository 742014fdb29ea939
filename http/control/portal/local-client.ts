import { ensureOAuthClient } from '../../../commands/identity/oauth-clients.js';
import { localPortalClient, type LocalPortalClient } from '../../../infra/portal/settings.js';
import type { ServiceContext } from '../../shared/context.js';

/**
 * Registers the portal as a confidential client of the identity service of
 * this same process (`npm start`), idempotently: every start and every instance
 * derives the same client and finds it registered. The login then works with
 * no setting at all. Undefined when PORTAL_CLIENT_ID or PORTAL_OIDC_ISSUER
 * name another identity service, or when the registration failed (logged).
 */
export async function registerLocalPortalClient(ctx: ServiceContext): Promise<LocalPortalClient | undefined> {
  // Configured for another identity service: nothing to register here.
  if (ctx.config.portalClientId !== undefined || ctx.config.portalOidcIssuer !== undefined) return undefined;
  try {
    const local = localPortalClient(ctx.config);
    const outcome = await ensureOAuthClient(
      { store: ctx.store, pool: ctx.pool, now: ctx.now, settle: ctx.store.transactional ? undefined : () => ctx.projections.catchUp(['oidc']) },
      { client_id: local.clientId, client_secret: local.clientSecret, name: 'Autopeering portal', redirect_uris: [local.redirectUri], confidential: true },
      { actor: 'portal-login-setup' },
    );
    ctx.log.info({ clientId: local.clientId, redirectUri: local.redirectUri, outcome }, 'portal login client at the local identity service');
    return local;
  } catch (err) {
    // The rest of the server works without it; the login endpoints answer 503.
    ctx.log.error({ err }, 'portal login client could not be registered at the local identity service; portal login disabled');
    return undefined;
  }
}
