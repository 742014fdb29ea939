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
