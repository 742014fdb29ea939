import type { FleetDeps } from '../../../commands/fleet-write.js';
import { unblockPrefix } from '../../../commands/fleet-ops/prefix-mitigations.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { ADMIN, metadataOf } from '../fleet/common.js';
import { PrefixBody, PrefixResult, TAGS } from './schemas.js';
import { PREFIX_BODY_LIMIT_BYTES } from './schemas.js';

/** `POST /admin/fleet/mitigations/prefix-unblock`: revoke a block on the named nodes, or everywhere. */
export function prefixUnblockRoute(r: ApiRouter, ctx: ServiceContext, deps: FleetDeps): void {
  r.route({
    method: 'post',
    path: '/admin/fleet/mitigations/prefix-unblock',
    summary: 'revoke a prefix block on the given nodes, or on every node carrying it',
    security: ADMIN,
    tags: TAGS.mitigations,
    body: PrefixBody,
    bodyLimit: PREFIX_BODY_LIMIT_BYTES,
    responses: { 200: PrefixResult, 404: 'unknown node <id>', 409: 'node <id> is decommissioned', 422: 'invalid prefix: <input>' },
    handler: async (req, res) => {
      res.json(await unblockPrefix(deps, req.body, metadataOf(ctx, req, res)));
    },
  });
}
