import type { FleetDeps } from '../../../commands/fleet-write.js';
import { migrateInternalPorts } from '../../../commands/fleet-ops/migrations.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { operationRoute } from './operation-route.js';

/** `POST /admin/fleet/migrate-internal-ports`: internal links listen inside 52800-52820; the other end dials the new port. */
export function migrateInternalPortsRoute(r: ApiRouter, ctx: ServiceContext, deps: FleetDeps): void {
  operationRoute(
    r,
    ctx,
    deps,
    '/admin/fleet/migrate-internal-ports',
    'move internal WireGuard listen ports into the internal pool and re-point the remote endpoints',
    () => migrateInternalPorts,
  );
}
