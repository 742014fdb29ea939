import type { KoaContextWithOIDC } from 'oidc-provider';
import { activeClients } from '../../../projections/oidc/queries.js';
import type { Queryable } from '../../../infra/db/pool.js';
import { PROVIDER_ROUTES } from './configuration.js';

const OPEN_PATHS = new Set(['/.well-known/openid-configuration']);
const CLIENT_PATHS = new Set<string>([PROVIDER_ROUTES.token, PROVIDER_ROUTES.userinfo]);
const PREFLIGHT_MAX_AGE = '3600';

/** Whether `origin` is the origin of a redirect URI of some active client. */
export async function isRegisteredOrigin(db: Queryable, origin: string): Promise<boolean> {
  const clients = await activeClients(db);
  return clients.some((c) => c.redirect_uris.some((uri) => URL.canParse(uri) && new URL(uri).origin === origin));
}

/**
 * CORS on the provider's endpoints, ahead of oidc-provider's own (which echoes
 * any Origin on discovery and on every preflight, and steps aside when
 * `Access-Control-*` is already set). Discovery: readable from anywhere (`*`,
 * never credentials). Token and UserInfo: a preflight is allowed only for the
 * origin of a registered client's redirect URI; the request itself is checked
 * against its own client by `clientBasedCORS`.
 */
export function providerCors(db: Queryable) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    const preflight = ctx.method === 'OPTIONS' && !!ctx.get('Access-Control-Request-Method');
    if (OPEN_PATHS.has(ctx.path)) {
      ctx.set('Access-Control-Allow-Origin', '*');
      if (!preflight) return next();
      ctx.set('Access-Control-Allow-Methods', 'GET');
      ctx.set('Access-Control-Max-Age', PREFLIGHT_MAX_AGE);
      ctx.status = 204;
      return;
    }
    if (CLIENT_PATHS.has(ctx.path) && preflight) {
      const origin = ctx.get('Origin');
      // A refused preflight is an answer without CORS headers: the browser then blocks the request.
      if (!origin || !(await isRegisteredOrigin(db, origin))) {
        ctx.vary('Origin');
        ctx.status = 204;
        return;
      }
    }
    return next();
  };
}
