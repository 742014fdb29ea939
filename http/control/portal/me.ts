import { Type } from '@sinclair/typebox';
import { revokePortalSession } from '../../../infra/portal/sessions.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { PORTAL_UNAUTHORIZED, portalOf } from './auth.js';
import { ExpiresAt, PORTAL_SECURITY, PORTAL_TAGS, Profile } from './schemas.js';

/** `GET /autopeering/me` and `POST /autopeering/auth/logout` (portal session). */
export function portalMeRoutes(ctx: ServiceContext): ApiRouter {
  const common = { tags: PORTAL_TAGS, security: PORTAL_SECURITY };
  return new ApiRouter('/control/v1')
    .route({
      ...common,
      method: 'get',
      path: '/autopeering/me',
      summary: 'the portal identity (cached claims) and when the session expires',
      responses: { 200: Type.Object({ profile: Profile, expires_at: ExpiresAt }), ...PORTAL_UNAUTHORIZED },
      handler: (_req, res) => {
        const portal = portalOf(res);
        res.setHeader('Cache-Control', 'no-store');
        res.json({ profile: portal.profile, expires_at: portal.expiresAt.toISOString() });
      },
    })
    .route({
      ...common,
      method: 'post',
      path: '/autopeering/auth/logout',
      summary: 'ends this portal session only (its token is refused from now on)',
      responses: { 204: 'logged out', ...PORTAL_UNAUTHORIZED },
      handler: async (_req, res) => {
        await revokePortalSession(ctx.pool, portalOf(res).sessionId, ctx.now());
        res.status(204).end();
      },
    });
}
