import { Type } from '@sinclair/typebox';
import { listRequests } from '../../../projections/autopeering/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { ADMIN } from '../fleet/common.js';
import { RequestRowSchema, RequestStatusSchema } from './schemas.js';

/** `GET /admin/autopeering/requests?status=`: every request for the audit, newest first. */
export function requestListRoute(r: ApiRouter, ctx: ServiceContext): void {
  r.route({
    method: 'get',
    path: '/admin/autopeering/requests',
    summary: 'autopeering requests newest first, optionally of one status',
    security: ADMIN,
    tags: ['autopeering'],
    query: Type.Object({ status: Type.Optional(RequestStatusSchema) }, { additionalProperties: false }),
    responses: { 200: Type.Object({ requests: Type.Array(RequestRowSchema) }), 422: 'invalid status' },
    handler: async (req, res) => {
      res.json({ requests: await listRequests(ctx.pool, { status: req.validQuery.status }) });
    },
  });
}
