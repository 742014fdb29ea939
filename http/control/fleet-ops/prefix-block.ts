import type { FleetDeps } from '../../../commands/fleet-write.js';
import { blockPrefix } from '../../../commands/fleet-ops/prefix-mitigations.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { ADMIN, metadataOf } from '../fleet/common.js';
import { PrefixBody, PrefixResult, TAGS } from './schemas.js';
import { PREFIX_BODY_LIMIT_BYTES } from './schemas.js';

/** `POST /admin/fleet/mitigations/prefix-block`: exact-match reject of a prefix on eBGP import, on the named or all active nodes. */
export function prefixBlockRoute(r: ApiRouter, ctx: ServiceContext, deps: FleetDeps): void {
  r.route({
    method: 'post',
    path: '/admin/fleet/mitigations/prefix-block',
    summary: 'block a prefix (exact match, eBGP import) on the given nodes, or on every non-decommissioned node',
    security: ADMIN,
    tags: TAGS.mitigations,
    body: PrefixBody,
    bodyLimit: PREFIX_BODY_LIMIT_BYTES,
    responses: { 200: PrefixResult, 404: 'unknown node <id>', 409: 'node <id> is decommissioned', 422: 'invalid prefix: <input>' },
    handler: async (req, res) => {
      res.json(await blockPrefix(deps, req.body, metadataOf(ctx, req, res)));
    },
  });
}
