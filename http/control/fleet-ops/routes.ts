import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { fleetDeps } from '../fleet/common.js';
import { migrateInternalPortsRoute } from './migrate-internal-ports.js';
import { migrateKeysRoute } from './migrate-keys.js';
import { mitigationsRoute } from './mitigations.js';
import { normalizePeerNamesRoute } from './normalize-peer-names.js';
import { peerDisableRoute } from './peer-disable.js';
import { peerEnableRoute } from './peer-enable.js';
import { portPoolsRoute } from './port-pools.js';
import { prefixBlockRoute } from './prefix-block.js';
import { prefixUnblockRoute } from './prefix-unblock.js';

/** Fleet operations and flap mitigations under `/admin/fleet` (admin credential; writes audited by `auditWrites`). */
export function fleetOpsRoutes(ctx: ServiceContext): ApiRouter {
  const r = new ApiRouter('/control/v1');
  const deps = fleetDeps(ctx);
  portPoolsRoute(r);
  normalizePeerNamesRoute(r, ctx, deps);
  migrateKeysRoute(r, ctx, deps);
  migrateInternalPortsRoute(r, ctx, deps);
  mitigationsRoute(r, ctx);
  prefixBlockRoute(r, ctx, deps);
  prefixUnblockRoute(r, ctx, deps);
  peerDisableRoute(r, ctx, deps);
  peerEnableRoute(r, ctx, deps);
  return r;
}
