import { listMitigations } from '../../../commands/fleet-ops/list-mitigations.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { ADMIN } from '../fleet/common.js';
import { MitigationsView, TAGS } from './schemas.js';

/** `GET /admin/fleet/mitigations`: blocked prefixes grouped by prefix with their nodes, and every disabled session. */
export function mitigationsRoute(r: ApiRouter, ctx: ServiceContext): void {
  r.route({
    method: 'get',
    path: '/admin/fleet/mitigations',
    summary: 'active blocked prefixes (grouped by prefix, with nodes) and all disabled sessions',
    security: ADMIN,
    tags: TAGS.mitigations,
    responses: { 200: MitigationsView },
    handler: async (_req, res) => {
      res.json(await listMitigations(ctx.pool, ctx.store));
    },
  });
}
