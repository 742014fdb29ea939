import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../shared/context.js';
import { ApiRouter } from '../shared/routes.js';
import { requireSession, sessionOf } from './require-session.js';

export const SessionIdentity = Type.Object(
  {
    asn: Type.Integer({ description: 'the verified ASN' }),
    mntner: Type.Union([Type.String(), Type.Null()], { description: "the verified maintainer (the token's `mnt` claim)" }),
    method: Type.Union(
      ['email', 'pgp', 'ssh', 'passkey'].map((m) => Type.Literal(m)),
      { description: 'how the identity was proven' },
    ),
    sub: Type.String({ description: 'lowercase hex sha256 of `<mntner>/<asn>`' }),
    expires_at: Type.String({ format: 'date-time', description: 'when the session token expires' }),
  },
  { description: 'session identity' },
);

/** `GET /session`: who the bearer session token names, as verified here. */
export function sessionRoutes(ctx: ServiceContext, prefix: string): ApiRouter {
  const api = new ApiRouter(prefix);
  api.router.get('/session', requireSession(ctx));
  return api.route({
    method: 'get',
    path: '/session',
    summary: 'the identity of the bearer session token',
    tags: ['session'],
    security: ['session'],
    responses: { 200: SessionIdentity, 401: 'missing or invalid session token' },
    handler: (_req, res) => {
      const s = sessionOf(res);
      res.json({ asn: s.asn, mntner: s.mnt ?? null, method: s.method, sub: s.sub, expires_at: new Date(s.exp * 1000).toISOString() });
    },
  });
}
