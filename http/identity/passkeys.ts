import { Type } from '@sinclair/typebox';
import type { RequestHandler, Response } from 'express';
import { beginLogin, beginRegistration, deletePasskey, finishLogin, finishRegistration, listPasskeys } from '../../commands/identity/passkeys.js';
import { rateLimit } from '../../infra/rate-limit.js';
import { clientAddress } from '../shared/client-address.js';
import type { ServiceContext } from '../shared/context.js';
import { requestMetadata } from '../shared/metadata.js';
import { ApiRouter } from '../shared/routes.js';
import { identityError } from './errors.js';
import { sessionGrantFields } from './verification-schemas.js';
import { requireSession, sessionOf } from './require-session.js';

/**
 * Per-IP limit of the passkey login endpoints (begin and finish together; the
 * contract leaves the numbers open): 30 requests per 10 minutes, so 15 logins.
 * Counted in PostgreSQL (pool `passkey-login`) so every instance agrees.
 */
export const PASSKEY_LOGIN_LIMIT = { pool: 'passkey-login', limit: 30, windowSeconds: 600 } as const;
export const TOO_MANY_PASSKEY_LOGINS = 'too many passkey login attempts';

const TAGS = ['passkeys'];
const SESSION = ['session'];

const PasskeySummary = Type.Object({
  credential_id: Type.String({ description: 'WebAuthn credential id (base64url)' }),
  label: Type.String({ description: 'name the owner gave it' }),
  aaguid: Type.String({ description: 'authenticator model' }),
  created_at: Type.String({ format: 'date-time', description: 'when it was registered' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'its last login, or null' }),
  disabled: Type.Boolean({ description: 'true when it may no longer log in' }),
});
const Ceremony = Type.Object({
  ceremony_id: Type.String({ description: 'single use, 5 minute lifetime' }),
  options: Type.Object({}, { additionalProperties: true, description: 'WebAuthn options, passed straight to the browser' }),
});
/** The browser's credential JSON, kept whole; its contents are the verifier's business (failures: 400). */
const Credential = Type.Object({ id: Type.String({ minLength: 1, maxLength: 1366 }), type: Type.Optional(Type.String()) }, { additionalProperties: true });
const CeremonyId = Type.String({ minLength: 1, maxLength: 128 });
const RegisterFinish = Type.Object(
  { ceremony_id: CeremonyId, credential: Credential, label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) },
  { additionalProperties: false },
);
const LoginBegin = Type.Object({ asn: Type.Integer({ minimum: 1, maximum: 4294967295 }) }, { additionalProperties: false });
const LoginFinish = Type.Object({ ceremony_id: CeremonyId, credential: Credential }, { additionalProperties: false });
const SessionGrant = Type.Object({ ...sessionGrantFields, method: Type.Literal('passkey', { description: 'always `passkey`' }) });

/** Passkeys of the session's maintainer (register, list, delete) and passkey login. */
export function passkeyRoutes(ctx: ServiceContext, prefix: string): ApiRouter {
  const api = new ApiRouter(prefix);
  const session = requireSession(ctx);
  // Guards run before the routes' own handlers (and their body validation): a route handler that calls next() hands on.
  api.router.get('/passkeys', session);
  api.router.post(['/passkeys/register/begin', '/passkeys/register/finish'], session);
  api.router.delete('/passkeys/:credential_id', session);
  api.router.post(['/passkeys/login/begin', '/passkeys/login/finish'], loginLimit(ctx));
  const mntnerOf = (res: Response) => sessionOf(res).mnt;

  return api
    .route({
      method: 'post',
      path: '/passkeys/register/begin',
      summary: 'options for creating a passkey for the session maintainer',
      tags: TAGS,
      security: SESSION,
      responses: { 200: Ceremony, 400: 'session has no maintainer', 401: 'missing or invalid session token' },
      handler: async (req, res) => {
        res.json(await beginRegistration(ctx, mntnerOf(res), requestMetadata(req, res, ctx.now())));
      },
    })
    .route({
      method: 'post',
      path: '/passkeys/register/finish',
      summary: 'store the created passkey',
      tags: TAGS,
      security: SESSION,
      body: RegisterFinish,
      responses: {
        201: PasskeySummary,
        400: 'verification failed or no maintainer',
        404: 'ceremony unknown or used',
        409: 'passkey already registered',
        410: 'ceremony expired',
      },
      handler: async (req, res) => {
        res.status(201).json(await finishRegistration(ctx, mntnerOf(res), req.body, requestMetadata(req, res, ctx.now())));
      },
    })
    .route({
      method: 'get',
      path: '/passkeys',
      summary: 'passkeys of the session maintainer',
      tags: TAGS,
      security: SESSION,
      responses: {
        200: Type.Object({
          mntner: Type.Union([Type.String(), Type.Null()], { description: 'the session maintainer' }),
          passkeys: Type.Array(PasskeySummary, { description: 'its credentials' }),
        }),
        401: 'missing or invalid session token',
      },
      handler: async (_req, res) => {
        const mntner = mntnerOf(res);
        res.json({ mntner: mntner ?? null, passkeys: mntner ? await listPasskeys(ctx, mntner) : [] });
      },
    })
    .route({
      method: 'delete',
      path: '/passkeys/{credential_id}',
      summary: 'remove a passkey of the session maintainer',
      tags: TAGS,
      security: SESSION,
      params: Type.Object({ credential_id: Type.String({ minLength: 1, maxLength: 1366 }) }),
      responses: { 204: 'removed', 404: 'not yours or not existing' },
      handler: async (req, res) => {
        await deletePasskey(ctx, mntnerOf(res), req.params.credential_id, requestMetadata(req, res, ctx.now()));
        res.status(204).end();
      },
    })
    .route({
      method: 'post',
      path: '/passkeys/login/begin',
      summary: 'options for logging in to an ASN with a passkey',
      tags: TAGS,
      body: LoginBegin,
      responses: {
        200: Ceremony,
        404: 'ASN unknown or no passkey (fall back to the challenge flow)',
        429: TOO_MANY_PASSKEY_LOGINS,
        503: 'registry unavailable',
      },
      handler: async (req, res) => {
        res.json(await beginLogin(ctx, req.body.asn, requestMetadata(req, res, ctx.now())));
      },
    })
    .route({
      method: 'post',
      path: '/passkeys/login/finish',
      summary: 'verify the assertion and issue a session',
      tags: TAGS,
      body: LoginFinish,
      responses: {
        200: SessionGrant,
        400: 'verification failed',
        403: 'authorization lapsed',
        404: 'ceremony unknown or used',
        410: 'ceremony expired',
        429: TOO_MANY_PASSKEY_LOGINS,
      },
      handler: async (req, res) => {
        const grant = await finishLogin(ctx, req.body, requestMetadata(req, res, ctx.now()));
        // The body carries a bearer token (RFC 6749 5.1).
        res.setHeader('Cache-Control', 'no-store');
        res.json(grant);
      },
    });
}

function loginLimit(ctx: ServiceContext): RequestHandler {
  const limit = rateLimit(ctx.pool, PASSKEY_LOGIN_LIMIT);
  return async (req, _res, next) => {
    try {
      if (!(await limit.take(clientAddress(req), ctx.now()))) return next(identityError(429, TOO_MANY_PASSKEY_LOGINS));
      next();
    } catch (err) {
      next(err);
    }
  };
}
