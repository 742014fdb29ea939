import { configuredCaptcha, type CaptchaVerifier, type ChallengeIssuer } from '../../../infra/captcha/index.js';
import { AltchaChallenge } from '../../shared/captcha.js';
import type { ServiceContext } from '../../shared/context.js';
import { HttpError } from '../../shared/errors.js';
import type { ApiRouter } from '../../shared/routes.js';

export const CAPTCHA_FAILED = 'captcha verification failed';
/** The action an external widget on the console's login form must report. */
export const CONTROL_LOGIN_ACTION = 'control_login';

/**
 * The control login's captcha, from `CONTROL_LOGIN_CAPTCHA`. Unset, or set
 * without its secret, gives a provider that refuses every ticket (fails closed).
 */
export function controlLoginCaptcha(ctx: ServiceContext): CaptchaVerifier & Partial<ChallengeIssuer> {
  return configuredCaptcha(ctx.config, ctx.config.controlLoginCaptcha, CONTROL_LOGIN_ACTION, ctx.store);
}

/**
 * Why the control login's captcha refuses every ticket, or undefined when it is
 * configured: logged with each refused login, since the answer itself must stay
 * the contract's fixed `captcha verification failed`.
 */
export function loginCaptchaProblem(config: ServiceContext['config']): string | undefined {
  const hint = 'a start on a loopback BIND_HOST sets up pow by itself (DATA_DIR/local-secrets.json)';
  switch (config.controlLoginCaptcha) {
    case undefined:
      return `CONTROL_LOGIN_CAPTCHA is not set, so every control login fails closed with "${CAPTCHA_FAILED}": set CONTROL_LOGIN_CAPTCHA=pow and CAPTCHA_SECRET, or external with CAPTCHA_VERIFY_URL and CAPTCHA_VERIFY_SECRET; ${hint}`;
    case 'pow':
      return config.captchaSecret
        ? undefined
        : `CONTROL_LOGIN_CAPTCHA=pow but CAPTCHA_SECRET is not set, so every control login fails closed with "${CAPTCHA_FAILED}"; ${hint}`;
    case 'external':
      return config.captchaVerifyUrl && config.captchaVerifySecret
        ? undefined
        : `CONTROL_LOGIN_CAPTCHA=external but CAPTCHA_VERIFY_URL or CAPTCHA_VERIFY_SECRET is not set, so every control login fails closed with "${CAPTCHA_FAILED}"`;
  }
}

/** `GET /auth/captcha`: a proof-of-work challenge for the login form, when the login captcha is `pow`. */
export function captchaChallengeRoute(router: ApiRouter, ctx: ServiceContext, captcha: Partial<ChallengeIssuer>): void {
  router.route({
    method: 'get',
    path: '/auth/captcha',
    summary: 'Proof-of-work challenge for the login captcha',
    tags: ['auth'],
    responses: { 200: AltchaChallenge, 403: 'admin surface locked', 404: 'the login captcha is not proof of work' },
    handler: async (_req, res) => {
      if (!captcha.issueChallenge) throw new HttpError(404, 'no captcha challenge: the login captcha is not proof of work');
      res.set('cache-control', 'no-store').json(await captcha.issueChallenge(ctx.now()));
    },
  });
}
