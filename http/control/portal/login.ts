import { Type } from '@sinclair/typebox';
import type { Response } from 'express';
import { profileOfClaims } from '../../../domain/autopeering/portal-profile.js';
import { ProviderUnavailable, UpstreamRefused, type PortalRelyingParty } from '../../../infra/portal/relying-party.js';
import { beginLogin, exchangeHandoff, openWithHandoff, randomSecret, takeLogin } from '../../../infra/portal/sessions.js';
import { rateLimit, type RateLimit } from '../../../infra/rate-limit.js';
import { clientAddress } from '../../shared/client-address.js';
import type { ServiceContext } from '../../shared/context.js';
import { HttpError } from '../../shared/errors.js';
import { ApiRouter, type OtherBody } from '../../shared/routes.js';
import { IDENTITY_UNAVAILABLE, relyingParty, type PortalLoginWiring } from './login-wiring.js';
import { siteRelativeNext } from './next.js';
import { ExpiresAt, PORTAL_TAGS, Profile } from './schemas.js';

export const INVALID_HANDOFF = 'invalid, expired or already used handoff code';
/** Logins one client address may start (each stores a transaction until it expires): 60 per 10 minutes. */
export const PORTAL_LOGIN_LIMIT = { pool: 'portal-login', limit: 60, windowSeconds: 600 } as const;
export const TOO_MANY_LOGINS = 'too many portal logins from this address; retry in a few minutes';

/**
 * Values of `error=` on the callback's redirect to `{portal_url}/auth/complete`
 * (docs/decisions.md): the portal page shows a text per value.
 */
export const CALLBACK_ERRORS = {
  invalid_request: 'the callback carried no state or no code',
  login_expired: 'the login transaction is unknown, used or expired: start the login again',
  access_denied: 'the user declined at the identity service',
  provider_error: 'the identity service answered the authorization with another error',
  exchange_failed: 'the code exchange or the ID token check (signature, issuer, audience, nonce) failed',
  provider_unavailable: 'the identity service could not be reached',
} as const;
export type CallbackError = keyof typeof CALLBACK_ERRORS;

const LOGIN_UNAVAILABLE = `portal login not configured (missing settings are named) / ${IDENTITY_UNAVAILABLE}`;
const LOGIN_REFUSALS = { 429: TOO_MANY_LOGINS, 503: LOGIN_UNAVAILABLE };
const NextQuery = Type.Object({
  next: Type.Optional(Type.String({ description: 'where the portal goes after the login; kept only when site-relative (`/x`), else discarded' })),
});
const redirect = (description: string): OtherBody => ({ mediaType: 'text/plain', schema: Type.String({ description: 'redirect notice' }), description });

/** `/autopeering/auth/login`, `/login-url`, `/callback`, `/exchange` (document 3, "Autopeering portal API"). */
export function portalLoginRoutes(ctx: ServiceContext, wiring: PortalLoginWiring): ApiRouter {
  const limit = rateLimit(ctx.pool, PORTAL_LOGIN_LIMIT);
  return new ApiRouter('/control/v1')
    .route({
      method: 'get',
      path: '/autopeering/auth/login',
      summary: 'starts a login (state, nonce, PKCE S256 kept server-side) and redirects to the identity service authorization page',
      tags: PORTAL_TAGS,
      security: [],
      query: NextQuery,
      responses: { 302: redirect('to the authorization page of the identity service (Location)'), ...LOGIN_REFUSALS },
      handler: async (req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.redirect(302, (await startLogin(ctx, relyingParty(wiring), limit, clientAddress(req), req.validQuery.next)).href);
      },
    })
    .route({
      method: 'get',
      path: '/autopeering/auth/login-url',
      summary: 'starts a login like /auth/login and answers the authorization URL instead of redirecting',
      tags: PORTAL_TAGS,
      security: [],
      query: NextQuery,
      responses: {
        200: Type.Object({ authorize_url: Type.String({ description: 'the identity service authorization page with this login transaction' }) }),
        ...LOGIN_REFUSALS,
      },
      handler: async (req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        res.json({ authorize_url: (await startLogin(ctx, relyingParty(wiring), limit, clientAddress(req), req.validQuery.next)).href });
      },
    })
    .route({
      method: 'get',
      path: '/autopeering/auth/callback',
      summary: 'OIDC callback: redeems the code, checks the ID token (nonce bound), opens the session; redirects to {portal_url}/auth/complete',
      tags: PORTAL_TAGS,
      security: [],
      query: Type.Object(
        {
          code: Type.Optional(Type.String({ description: 'authorization code' })),
          state: Type.Optional(Type.String({ description: 'the login transaction' })),
          error: Type.Optional(Type.String({ description: 'OAuth error of the authorization (access_denied, ...)' })),
          error_description: Type.Optional(Type.String({ description: 'its text' })),
          iss: Type.Optional(Type.String({ description: 'issuer (RFC 9207)' })),
        },
        { additionalProperties: true },
      ),
      responses: {
        302: redirect(
          `to {portal_url}/auth/complete with handoff=<one-time code> (and next when kept), or with error=<${Object.keys(CALLBACK_ERRORS).join(' | ')}> (and next)`,
        ),
        422: 'a query parameter given twice',
        503: 'portal login not configured (missing settings are named)',
      },
      handler: async (req, res) => {
        res.setHeader('Cache-Control', 'no-store');
        await callback(ctx, relyingParty(wiring), req.originalUrl, req.validQuery, res);
      },
    })
    .route({
      method: 'post',
      path: '/autopeering/auth/exchange',
      summary: 'trades the one-time handoff code for the portal session token (first use only; the code is void afterwards)',
      tags: PORTAL_TAGS,
      security: [],
      body: Type.Object(
        { handoff: Type.String({ minLength: 1, maxLength: 200, description: 'the code of the callback redirect' }) },
        { additionalProperties: false },
      ),
      responses: {
        200: Type.Object({
          session_token: Type.String({ description: 'portal session token (opaque Bearer); keep it in session storage' }),
          profile: Profile,
          expires_at: ExpiresAt,
        }),
        401: INVALID_HANDOFF,
        422: 'body is not {handoff}',
        503: 'portal login not configured (missing settings are named)',
      },
      handler: async (req, res) => {
        relyingParty(wiring);
        res.setHeader('Cache-Control', 'no-store');
        const exchanged = await exchangeHandoff(ctx.pool, req.body.handoff, ctx.now());
        if (!exchanged) {
          res.locals.auditDetail = INVALID_HANDOFF;
          throw new HttpError(401, INVALID_HANDOFF);
        }
        const { session, token } = exchanged;
        res.locals.actor = session.profile.asn !== null ? `portal:AS${session.profile.asn}/${session.profile.mntner}` : `portal:${session.profile.sub}`;
        res.json({ session_token: token, profile: session.profile, expires_at: session.expiresAt.toISOString() });
      },
    });
}

/**
 * Creates a login transaction and answers its authorization URL (503 when the
 * identity service cannot be reached; 429 past `PORTAL_LOGIN_LIMIT` for the address).
 */
async function startLogin(ctx: ServiceContext, rp: PortalRelyingParty, limit: RateLimit, address: string, next: string | undefined): Promise<URL> {
  if (!(await limit.take(address, ctx.now()))) throw new HttpError(429, TOO_MANY_LOGINS);
  const checks = { state: randomSecret(), nonce: randomSecret(), codeVerifier: randomSecret() };
  let url: URL;
  try {
    url = await rp.authorizationUrl(checks);
  } catch (err) {
    if (err instanceof ProviderUnavailable) throw new HttpError(503, IDENTITY_UNAVAILABLE);
    throw err;
  }
  await beginLogin(ctx.pool, checks.state, { nonce: checks.nonce, codeVerifier: checks.codeVerifier, next: siteRelativeNext(next) }, ctx.now());
  return url;
}

interface CallbackQuery {
  code?: string;
  state?: string;
  error?: string;
}

/**
 * The callback: every outcome is a redirect to the portal's completion page,
 * with a handoff code or an `error`. The login transaction is taken (deleted)
 * first, so a replayed callback finds none (`login_expired`).
 */
async function callback(ctx: ServiceContext, rp: PortalRelyingParty, originalUrl: string, query: CallbackQuery, res: Response): Promise<void> {
  const now = ctx.now();
  const tx = query.state !== undefined ? await takeLogin(ctx.pool, query.state, now) : undefined;
  const complete = (params: Record<string, string>) => {
    const target = new URL(`${rp.settings.portalUrl}/auth/complete`);
    for (const [k, v] of Object.entries(params)) target.searchParams.set(k, v);
    if (tx?.next) target.searchParams.set('next', tx.next);
    res.redirect(302, target.href);
  };
  const fail = (error: CallbackError) => complete({ error });
  if (!tx) return fail(query.state === undefined ? 'invalid_request' : 'login_expired');
  if (query.error !== undefined) return fail(query.error === 'access_denied' ? 'access_denied' : 'provider_error');
  if (query.code === undefined) return fail('invalid_request');
  let redeemed: Awaited<ReturnType<PortalRelyingParty['redeem']>>;
  try {
    redeemed = await rp.redeem(originalUrl.slice(originalUrl.indexOf('?')), { state: query.state!, nonce: tx.nonce, codeVerifier: tx.codeVerifier });
  } catch (err) {
    const error: CallbackError = err instanceof ProviderUnavailable ? 'provider_unavailable' : 'exchange_failed';
    ctx.log.warn({ err: err instanceof UpstreamRefused ? err.message : err, error }, 'portal login callback failed');
    return fail(error);
  }
  const { tokens, claims } = redeemed;
  const { handoff } = await openWithHandoff(ctx.pool, {
    profile: profileOfClaims(claims),
    claims,
    upstream: {
      accessToken: tokens.accessToken,
      accessExpiresAt: tokens.expiresInSeconds === null ? null : new Date(now.getTime() + tokens.expiresInSeconds * 1000),
      refreshToken: tokens.refreshToken,
    },
    now,
  });
  complete({ handoff });
}
