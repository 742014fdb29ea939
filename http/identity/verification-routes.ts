import type { ChallengeDeps } from '../../commands/identity/challenges.js';
import { captchaFailureLimit, type OptionsDeps } from '../../commands/identity/verification.js';
import { identityCaptcha } from '../../infra/identity/captcha.js';
import { mailSender } from '../../infra/mail.js';
import { registryClient } from '../../infra/registry/client.js';
import type { ServiceContext } from '../shared/context.js';
import { ApiRouter } from '../shared/routes.js';
import { captchaChallengeRoute } from './captcha.js';
import { challengeRoute, submitRoute } from './challenge.js';
import { verificationOptionsRoute } from './verification.js';

/** ASN verification: captcha puzzle, options, challenge, submit (prefix `/api/v1`), sharing one set of dependencies. */
export function verificationRouter(ctx: ServiceContext, prefix: string): ApiRouter {
  const router = new ApiRouter(prefix);
  const deps: OptionsDeps & ChallengeDeps = {
    config: ctx.config,
    log: ctx.log,
    store: ctx.store,
    registry: registryClient(ctx.config, ctx.log),
    captcha: identityCaptcha(ctx),
    mail: mailSender(ctx.config),
    captchaFailures: captchaFailureLimit(ctx.pool),
  };
  captchaChallengeRoute(router, ctx, deps.captcha);
  verificationOptionsRoute(router, ctx, deps);
  challengeRoute(router, ctx, deps);
  submitRoute(router, ctx, deps);
  return router;
}
