import type { FleetDeps } from '../../../commands/fleet-write.js';
import { normalizePeerNames } from '../../../commands/fleet-ops/migrations.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { operationRoute } from './operation-route.js';

/** `POST /admin/fleet/normalize-peer-names`: peerings, interfaces and sessions take the `dn42_<asn>` / `int_<node>` names. */
export function normalizePeerNamesRoute(r: ApiRouter, ctx: ServiceContext, deps: FleetDeps): void {
  operationRoute(
    r,
    ctx,
    deps,
    '/admin/fleet/normalize-peer-names',
    'rename peerings, interfaces and sessions to the dn42_<asn> / int_<node> convention',
    () => normalizePeerNames,
  );
}
