import { Type } from '@sinclair/typebox';
import { profileOfClaims } from '../../../domain/autopeering/portal-profile.js';
import { ProviderUnavailable, UpstreamRefused, type GrantedTokens, type PortalRelyingParty } from '../../../infra/portal/relying-party.js';
import { updateClaims, withUpstreamTokens, type UpstreamTokens } from '../../../infra/portal/sessions.js';
import type { ServiceContext } from '../../shared/context.js';
import { HttpError } from '../../shared/errors.js';
import { ApiRouter } from '../../shared/routes.js';
import { PORTAL_UNAUTHORIZED, portalOf } from './auth.js';
import { IDENTITY_UNAVAILABLE, relyingParty, type PortalLoginWiring } from './login-wiring.js';
import { PORTAL_SECURITY, PORTAL_TAGS, Profile } from './schemas.js';

export const LOGIN_AGAIN = 'the identity service no longer accepts this login: log in again';
/** An access token this close to its expiry is refreshed first (clock skew, request time). */
const EXPIRY_MARGIN_MS = 30_000;

/** `POST /autopeering/auth/refresh-claims`: re-reads UserInfo, refreshing an expired upstream access token silently. */
export function portalClaimsRoutes(ctx: ServiceContext, wiring: PortalLoginWiring): ApiRouter {
  return new ApiRouter('/control/v1').route({
    method: 'post',
    path: '/autopeering/auth/refresh-claims',
    summary: 'reads the claims again from the identity service (UserInfo) and caches them; an expired upstream access token is refreshed silently',
    tags: PORTAL_TAGS,
    security: PORTAL_SECURITY,
    responses: {
      200: Type.Object({ profile: Profile }),
      401: `${PORTAL_UNAUTHORIZED[401]} / ${LOGIN_AGAIN}`,
      503: `portal login not configured (missing settings are named) / ${IDENTITY_UNAVAILABLE}`,
    },
    handler: async (_req, res) => {
      const rp = relyingParty(wiring);
      const portal = portalOf(res);
      const now = ctx.now();
      const claims = await withUpstreamTokens(ctx.pool, portal.sessionId, (upstream, save) => freshClaims(rp, portal.profile.sub, upstream, save, now));
      if (claims instanceof Error) {
        res.locals.auditDetail = claims instanceof UpstreamRefused ? LOGIN_AGAIN : IDENTITY_UNAVAILABLE;
        throw claims instanceof UpstreamRefused ? new HttpError(401, LOGIN_AGAIN) : new HttpError(503, IDENTITY_UNAVAILABLE);
      }
      const profile = profileOfClaims(claims);
      await updateClaims(ctx.pool, portal.sessionId, { profile, claims, now });
      res.setHeader('Cache-Control', 'no-store');
      res.json({ profile });
    },
  });
}

/**
 * UserInfo with a live access token: an expired one (by its `expires_in`, or
 * refused by UserInfo) is first traded through the refresh token, and the new
 * pair saved at once, since the old refresh token is spent. Answers the claims,
 * or the error to report (`UpstreamRefused`: log in again; `ProviderUnavailable`).
 */
async function freshClaims(
  rp: PortalRelyingParty,
  sub: string,
  upstream: UpstreamTokens,
  save: (tokens: UpstreamTokens) => Promise<void>,
  now: Date,
): Promise<Record<string, unknown> | UpstreamRefused | ProviderUnavailable> {
  let current = upstream;
  let refreshed = false;
  const refresh = async (): Promise<void> => {
    if (!current.refreshToken) throw new UpstreamRefused('invalid_grant', 'no refresh token');
    const tokens = await rp.refresh(current.refreshToken);
    current = upstreamOf(tokens, now, current.refreshToken);
    refreshed = true;
    await save(current);
  };
  try {
    const expired = current.accessExpiresAt !== null && current.accessExpiresAt.getTime() - EXPIRY_MARGIN_MS <= now.getTime();
    if (!current.accessToken || expired) await refresh();
    try {
      return await rp.userinfo(current.accessToken!, sub);
    } catch (err) {
      // The provider's clock may retire a token before ours says so: one refresh, one retry.
      if (!(err instanceof UpstreamRefused) || refreshed) throw err;
      await refresh();
      return await rp.userinfo(current.accessToken!, sub);
    }
  } catch (err) {
    if (err instanceof UpstreamRefused || err instanceof ProviderUnavailable) return err;
    throw err;
  }
}

function upstreamOf(tokens: GrantedTokens, now: Date, previousRefresh: string): UpstreamTokens {
  return {
    accessToken: tokens.accessToken,
    accessExpiresAt: tokens.expiresInSeconds === null ? null : new Date(now.getTime() + tokens.expiresInSeconds * 1000),
    refreshToken: tokens.refreshToken ?? previousRefresh,
  };
}
