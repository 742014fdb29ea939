import { Type } from '@sinclair/typebox';
import { auditPage } from '../../../projections/audit-log/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { AuditEntry } from '../audit-log.js';
import { PageQuery, TAGS, UNAUTHORIZED } from './schemas.js';

/** Longest `q` accepted: longer than any actor, method or path worth searching for. */
export const AUDIT_QUERY_MAX = 200;

/** `GET /ui/audit`: the audit log newest first by id, cursor `before_id`, `q` a case-insensitive substring of actor, method or path. */
export function consoleAuditRoutes(ctx: ServiceContext): ApiRouter {
  return new ApiRouter('/control/v1').route({
    method: 'get',
    path: '/ui/audit',
    summary: 'audit log newest first; page on with before_id = the last id; q filters actor, method and path (substring, any case)',
    tags: TAGS,
    security: ['admin'],
    query: Type.Object(
      { ...PageQuery, q: Type.Optional(Type.String({ maxLength: AUDIT_QUERY_MAX, description: 'empty: no filter' })) },
      { additionalProperties: false },
    ),
    responses: { 200: Type.Object({ entries: Type.Array(AuditEntry) }), ...UNAUTHORIZED, 422: 'limit, before_id or q (over 200 characters) out of range' },
    handler: async (req, res) => {
      const { limit, before_id, q } = req.validQuery;
      // An empty search box filters nothing (every text contains the empty string).
      res.json({ entries: await auditPage(ctx.pool, { limit, beforeId: before_id, q: q || undefined }) });
    },
  });
}
