import type { ChallengeDeps } from '../../commands/identity/challenges.js';
import { captchaFailureLimit, type OptionsDeps } from '../../commands/identity/verification.js';
import { identityCaptcha } from '../../infra/identity/captcha.js';
import { mailSender } from '../../infra/mail.js';
import { registryClient } from '../../infra/registry/client.js';
import type { ServiceContext } from '../shared/context.js';

/** What the verification routes are built from, wired from the service context. */
export function verificationDeps(ctx: ServiceContext): OptionsDeps & ChallengeDeps {
  return {
    config: ctx.config,
    log: ctx.log,
    store: ctx.store,
    registry: registryClient(ctx.config, ctx.log),
    captcha: identityCaptcha(ctx),
    mail: mailSender(ctx.config),
    captchaFailures: captchaFailureLimit(ctx.pool),
  };
}
