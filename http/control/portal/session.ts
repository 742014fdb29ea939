import { Type } from '@sinclair/typebox';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { AUTH_METHODS, SESSION_AUDIENCE, subjectOf } from '../../../commands/identity/sessions.js';
import { bearerOf } from '../../shared/bearer.js';
import type { ServiceContext } from '../../shared/context.js';
import { HttpError } from '../../shared/errors.js';
import { ApiRouter } from '../../shared/routes.js';
import { IDENTITY_UNAVAILABLE, type PortalLoginWiring } from './login-wiring.js';
import { PORTAL_TAGS } from './schemas.js';

export const IDENTITY_NOT_CONFIGURED = 'identity service not configured (missing: PORTAL_OIDC_ISSUER)';
export const MISSING_SESSION_JWT = 'missing bearer token';
export const INVALID_SESSION_JWT = 'invalid or expired identity session token';

/** jose's codes for a key set that could not be had (timeout, non-200 answer, not a key set): the identity service's trouble, not the token's. */
const KEY_SET_TROUBLE = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JOSE_GENERIC', 'ERR_JWKS_INVALID']);

const SessionIdentity = Type.Object({
  asn: Type.Integer({ description: 'the verified ASN' }),
  mntner: Type.Union([Type.String(), Type.Null()], { description: "the verified maintainer (the token's `mnt` claim)" }),
  method: Type.String({ description: 'email, pgp, ssh or passkey' }),
  sub: Type.String({ description: 'lowercase hex sha256 of `<mntner>/<asn>`' }),
  expires_at: Type.String({ description: 'when the identity session token expires (ISO 8601)' }),
});

/**
 * `GET /autopeering/session`: an identity-service session JWT verified here,
 * against the key set the identity service publishes (jose caches it and
 * fetches again for an unknown kid, so a key rotation needs nothing).
 */
export function portalSessionRoutes(ctx: ServiceContext, wiring: PortalLoginWiring): ApiRouter {
  const issuer = wiring.sessionIssuer;
  const jwks = issuer ? createRemoteJWKSet(new URL(`${issuer.replace(/\/+$/, '')}/.well-known/jwks.json`), { timeoutDuration: 10_000 }) : undefined;
  return new ApiRouter('/control/v1').route({
    method: 'get',
    path: '/autopeering/session',
    summary: 'the identity of an identity-service session JWT (Bearer), verified locally against the JWKS',
    tags: PORTAL_TAGS,
    security: ['identity'],
    responses: {
      200: SessionIdentity,
      401: `${MISSING_SESSION_JWT} / ${INVALID_SESSION_JWT}`,
      503: `${IDENTITY_NOT_CONFIGURED} / ${IDENTITY_UNAVAILABLE}`,
    },
    handler: async (req, res) => {
      if (!issuer || !jwks) throw new HttpError(503, IDENTITY_NOT_CONFIGURED);
      const token = bearerOf(req.headers.authorization);
      if (token === undefined) throw new HttpError(401, MISSING_SESSION_JWT);
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, jwks, {
          algorithms: ['EdDSA'],
          issuer,
          audience: SESSION_AUDIENCE,
          currentDate: ctx.now(),
          requiredClaims: ['sub', 'iat', 'exp'],
        }));
      } catch (err) {
        if (!(err instanceof joseErrors.JOSEError) || KEY_SET_TROUBLE.has(err.code)) {
          ctx.log.warn({ err, issuer }, 'identity key set unavailable for /autopeering/session');
          throw new HttpError(503, IDENTITY_UNAVAILABLE);
        }
        throw new HttpError(401, INVALID_SESSION_JWT);
      }
      const { asn, mnt, method, sub, exp } = payload as JWTPayload & { asn?: unknown; mnt?: unknown; method?: unknown };
      const valid =
        typeof asn === 'number' &&
        Number.isInteger(asn) &&
        (mnt === undefined || (typeof mnt === 'string' && sub === subjectOf(mnt, asn))) &&
        typeof method === 'string' &&
        (AUTH_METHODS as readonly string[]).includes(method);
      if (!valid) throw new HttpError(401, INVALID_SESSION_JWT);
      res.setHeader('Cache-Control', 'no-store');
      res.json({ asn, mntner: mnt ?? null, method, sub, expires_at: new Date(exp! * 1000).toISOString() });
    },
  });
}
