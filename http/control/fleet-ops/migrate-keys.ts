import type { FleetDeps } from '../../../commands/fleet-write.js';
import { migrateKeys } from '../../../commands/fleet-ops/migrations.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { operationRoute } from './operation-route.js';

/** `POST /admin/fleet/migrate-keys`: internal links follow the remote node's registered key instead of a pinned one. */
export function migrateKeysRoute(r: ApiRouter, ctx: ServiceContext, deps: FleetDeps): void {
  const escrowExpected = Boolean(ctx.config.recoveryPublicKey);
  operationRoute(r, ctx, deps, '/admin/fleet/migrate-keys', "drop pinned peer keys of internal links so they follow the remote node's registered key", () =>
    migrateKeys(escrowExpected),
  );
}
