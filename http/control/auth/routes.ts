import { argon2Hasher } from '../../../infra/passwords.js';
import { auditWrites } from '../../shared/audit.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { captchaChallengeRoute, controlLoginCaptcha } from './captcha.js';
import { loginRoute } from './login.js';
import { passwordRoute } from './password.js';
import { requireAdmin, requireAdminSurface } from './require-admin.js';

/**
 * Account login under `/auth`. Writes are audited like admin writes (before the
 * lock, so refusals carry their status); the whole area answers 403 while no
 * static admin token is configured; `/auth/password` needs an account session.
 */
export function controlAuthRoutes(ctx: ServiceContext): ApiRouter {
  const router = new ApiRouter('/control/v1');
  const deps = { store: ctx.store, passwords: argon2Hasher() };
  const captcha = controlLoginCaptcha(ctx);
  router.router.use('/auth', auditWrites(ctx), requireAdminSurface(ctx));
  router.router.use('/auth/password', requireAdmin(ctx));
  captchaChallengeRoute(router, ctx, captcha);
  loginRoute(router, ctx, deps, captcha);
  passwordRoute(router, ctx, deps);
  return router;
}
