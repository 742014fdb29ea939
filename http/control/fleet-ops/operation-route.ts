import type { FleetDeps } from '../../../commands/fleet-write.js';
import { runFleetOperation, type FleetOperation } from '../../../commands/fleet-ops/migrations.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { ADMIN, metadataOf } from '../fleet/common.js';
import { DryRunBody, OperationResult, TAGS } from './schemas.js';

/** The shape the three fleet operations share: `{dry_run = true}` in, `{dry_run, changed_nodes, generations, details}` out. */
export function operationRoute(r: ApiRouter, ctx: ServiceContext, deps: FleetDeps, path: string, summary: string, operation: () => FleetOperation): void {
  r.route({
    method: 'post',
    path,
    summary,
    security: ADMIN,
    tags: TAGS.operations,
    body: DryRunBody,
    responses: { 200: OperationResult, 422: 'invalid body or materialization failed schema validation' },
    handler: async (req, res) => {
      res.json(await runFleetOperation(deps, operation(), req.body.dry_run ?? true, metadataOf(ctx, req, res)));
    },
  });
}
