import { Type } from '@sinclair/typebox';
import { login, LOGIN_SUCCEEDED, type AccountDeps } from '../../../commands/accounts.js';
import { clientAddress } from '../../shared/client-address.js';
import type { ServiceContext } from '../../shared/context.js';
import { HttpError } from '../../shared/errors.js';
import { requestMetadata } from '../../shared/metadata.js';
import type { ApiRouter } from '../../shared/routes.js';
import { auditOutcome } from './audit-outcome.js';
import { CAPTCHA_FAILED, loginCaptchaProblem } from './captcha.js';
import type { CaptchaVerifier } from '../../../infra/captcha/index.js';

/** The provider-branded name some login forms still send the captcha ticket under. */
export const LEGACY_CAPTCHA_FIELD = 'cf-turnstile-response';

const LoginBody = Type.Object({
  username: Type.String({ minLength: 1, maxLength: 64 }),
  password: Type.String({ maxLength: 1024 }),
  captcha_token: Type.Optional(Type.String({ maxLength: 8192 })),
  [LEGACY_CAPTCHA_FIELD]: Type.Optional(Type.String({ maxLength: 8192, description: 'legacy alias of captcha_token' })),
});

const LoginOut = Type.Object({
  token: Type.String({ description: 'account session token (32 random bytes), sent as `Authorization: Bearer`' }),
  expires_at: Type.String({ format: 'date-time', description: 'when the session ends (24 hours by default)' }),
});

/**
 * `POST /auth/login`: captcha first (one-time ticket), then the failure block,
 * then the credentials. The audit actor is `<attempted username>@<client ip>`
 * until the login succeeds, then the username.
 */
export function loginRoute(router: ApiRouter, ctx: ServiceContext, deps: AccountDeps, captcha: CaptchaVerifier): void {
  const unconfigured = loginCaptchaProblem(ctx.config);
  router.route({
    method: 'post',
    path: '/auth/login',
    summary: 'Log in with an account; returns a session token',
    tags: ['auth'],
    body: LoginBody,
    responses: {
      200: LoginOut,
      400: 'captcha verification failed',
      401: 'invalid credentials',
      403: 'admin surface locked',
      422: 'invalid body',
      429: 'too many attempts',
    },
    handler: async (req, res) => {
      const { username, password } = req.body;
      const ip = clientAddress(req);
      res.locals.actor = `${username}@${ip}`;
      await auditOutcome(res, async () => {
        const now = ctx.now();
        const ticket = req.body.captcha_token ?? req.body[LEGACY_CAPTCHA_FIELD] ?? '';
        if (!(await captcha.verify(ticket, { remoteIp: ip, now }))) {
          if (unconfigured) ctx.log.warn({ username }, `control login refused: ${unconfigured}`);
          throw new HttpError(400, CAPTCHA_FAILED);
        }
        const session = await login(
          deps,
          { username, password, now, sessionTtlMs: ctx.config.accountSessionTtlSeconds * 1000 },
          requestMetadata(req, res, now),
        );
        res.locals.actor = username;
        res.locals.auditDetail = LOGIN_SUCCEEDED;
        res.setHeader('Cache-Control', 'no-store');
        res.json({ token: session.token, expires_at: session.expiresAt.toISOString() });
      });
    },
  });
}
