import type { IdentityCaptcha } from '../../infra/identity/captcha.js';
import { POW_CHALLENGE_PATH } from '../../infra/identity/captcha.js';
import { AltchaChallenge } from '../shared/captcha.js';
import type { ServiceContext } from '../shared/context.js';
import type { ApiRouter } from '../shared/routes.js';
import { identityError } from './errors.js';

/** The router-relative path of the puzzle endpoint (`/api/v1/captcha/challenge`). */
const PATH = POW_CHALLENGE_PATH.replace(/^\/api\/v1/, '');

/**
 * `GET /captcha/challenge`: a proof-of-work puzzle for the verification flow. 404
 * when the captcha kind is not `pow`; 503 when it is but `CAPTCHA_SECRET` is missing.
 */
export function captchaChallengeRoute(router: ApiRouter, ctx: ServiceContext, captcha: IdentityCaptcha): void {
  router.route({
    method: 'get',
    path: PATH,
    summary: 'Proof-of-work captcha puzzle (captcha kind pow)',
    tags: ['verification'],
    responses: { 200: AltchaChallenge, 404: 'the captcha is not proof of work', 503: 'proof of work not configured' },
    handler: async (_req, res) => {
      res.set('cache-control', 'no-store');
      if (captcha.kind !== 'pow') throw identityError(404, 'no captcha puzzle: the captcha is not proof of work');
      if (!captcha.issueChallenge) throw identityError(503, 'proof-of-work captcha is not configured');
      res.json(await captcha.issueChallenge(ctx.now()));
    },
  });
}
