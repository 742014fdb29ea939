import type { ServiceContext } from '../shared/context.js';
import { ApiRouter } from '../shared/routes.js';
import { captchaChallengeRoute } from './captcha.js';
import { challengeRoute, submitRoute } from './challenge.js';
import { verificationDeps } from './verification-deps.js';
import { verificationOptionsRoute } from './verification.js';

/** ASN verification: captcha puzzle, options, challenge, submit (prefix `/api/v1`). */
export function verificationRouter(ctx: ServiceContext, prefix: string): ApiRouter {
  const router = new ApiRouter(prefix);
  const deps = verificationDeps(ctx);
  captchaChallengeRoute(router, ctx, deps.captcha);
  verificationOptionsRoute(router, ctx, deps);
  challengeRoute(router, ctx, deps);
  submitRoute(router, ctx, deps);
  return router;
}
