import { Type } from '@sinclair/typebox';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { PORTAL_UNAUTHORIZED } from './auth.js';
import { NodeOfferSchema } from './requests-schemas.js';
import { nodeOffers } from './requests-read.js';
import { PORTAL_SECURITY, PORTAL_TAGS } from './schemas.js';

/** `GET /autopeering/nodes`: the nodes open for autopeering with their seats (any portal session, ASN or not). */
export function portalNodeRoutes(ctx: ServiceContext): ApiRouter {
  return new ApiRouter('/control/v1').route({
    method: 'get',
    path: '/autopeering/nodes',
    summary: 'nodes open for autopeering (enabled, active), ordered by node_id, with capacity and display metadata',
    tags: PORTAL_TAGS,
    security: PORTAL_SECURITY,
    responses: { 200: Type.Object({ nodes: Type.Array(NodeOfferSchema) }), ...PORTAL_UNAUTHORIZED },
    handler: async (_req, res) => {
      res.json({ nodes: await nodeOffers(ctx.pool) });
    },
  });
}
