import { Type } from '@sinclair/typebox';
import { listAuditEntries } from '../../projections/audit-log/queries.js';
import type { ServiceContext } from '../shared/context.js';
import { ApiRouter } from '../shared/routes.js';

export const AuditEntry = Type.Object({
  id: Type.Integer({ description: 'entry id, increasing' }),
  actor: Type.String({
    description:
      'who wrote: the account name, `admin` for the static token, `<username>@<client ip>` for a login, `anonymous` when refused before authentication',
  }),
  method: Type.String({ description: 'HTTP method' }),
  path: Type.String({ description: 'request path' }),
  status_code: Type.Integer({ description: 'the status answered (refused writes too)' }),
  detail: Type.Union([Type.String(), Type.Null()], { description: 'error detail of a refused write, or null' }),
  created_at: Type.String({ format: 'date-time', description: 'when it was recorded' }),
});

/** `GET /admin/audit-log?limit=`: newest first; limit 1 to 1000, default 100. */
export function auditLogRoutes(ctx: ServiceContext): ApiRouter {
  return new ApiRouter('/control/v1').route({
    method: 'get',
    path: '/admin/audit-log',
    summary: 'Audit log, newest first',
    tags: ['audit'],
    security: ['admin'],
    query: Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }) }),
    responses: {
      200: Type.Object({ entries: Type.Array(AuditEntry, { description: 'newest first' }) }),
      401: 'missing or invalid token',
      403: 'admin surface locked',
      422: 'limit outside 1..1000',
    },
    handler: async (req, res) => {
      res.json({ entries: await listAuditEntries(ctx.pool, req.validQuery.limit) });
    },
  });
}
