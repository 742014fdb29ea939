import { Type } from '@sinclair/typebox';
import { changePassword, MIN_PASSWORD_LENGTH, passwordChangedDetail, type AccountDeps } from '../../../commands/accounts.js';
import type { ServiceContext } from '../../shared/context.js';
import { HttpError } from '../../shared/errors.js';
import { requestMetadata } from '../../shared/metadata.js';
import type { ApiRouter } from '../../shared/routes.js';
import { auditOutcome } from './audit-outcome.js';
import { principalOf } from './require-admin.js';

export const STATIC_TOKEN_PASSWORD = 'password change needs an account session token';

const PasswordBody = Type.Object({
  old_password: Type.String({ maxLength: 1024 }),
  new_password: Type.String({ minLength: MIN_PASSWORD_LENGTH, maxLength: 1024 }),
});

/** `POST /auth/password` (account session): new password, every live session of the account revoked. */
export function passwordRoute(router: ApiRouter, ctx: ServiceContext, deps: AccountDeps): void {
  router.route({
    method: 'post',
    path: '/auth/password',
    summary: 'Change the password of the signed-in account; revokes all its sessions',
    tags: ['auth'],
    security: ['admin'],
    body: PasswordBody,
    responses: { 204: 'changed', 401: 'invalid credentials or token', 403: 'static admin token, or admin surface locked', 422: 'invalid body' },
    handler: async (req, res) => {
      await auditOutcome(res, async () => {
        const principal = principalOf(res);
        if (principal?.kind !== 'account') throw new HttpError(403, STATIC_TOKEN_PASSWORD);
        const now = ctx.now();
        const { revokedSessions } = await changePassword(
          deps,
          { username: principal.username, oldPassword: req.body.old_password, newPassword: req.body.new_password, now },
          requestMetadata(req, res, now),
        );
        res.locals.auditDetail = passwordChangedDetail(revokedSessions);
        res.status(204).end();
      });
    },
  });
}
