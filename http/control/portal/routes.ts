import type { LocalPortalClient } from '../../../infra/portal/settings.js';
import { readsOf, type ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { portalClaimsRoutes } from './claims.js';
import { portalLoginRoutes } from './login.js';
import { portalLoginWiring } from './login-wiring.js';
import { portalMeRoutes } from './me.js';
import { portalNodeRoutes } from './nodes.js';
import { portalObserveRoutes } from './requests-observe.js';
import { portalRequestRoutes } from './requests.js';
import { portalSessionRoutes } from './session.js';
import { portalFlapViewRoutes } from './view-flaps.js';
import { portalFleetViewRoutes } from './view-fleet.js';
import { portalNotificationRoutes } from '../notifications/routes.js';

export interface PortalOptions {
  /** The portal's client at the identity service of this process (`registerLocalPortalClient`); absent: the PORTAL_* settings. */
  localClient?: LocalPortalClient;
}

/**
 * Every router of the portal API (`/control/v1/autopeering/...`), mounted by
 * `createControlApp` behind `portalGate`: a route here needs a portal session
 * unless auth.ts lists it as open. Add a new portal router to this list.
 */
export function portalRoutes(ctx: ServiceContext, options: PortalOptions = {}): ApiRouter[] {
  const wiring = portalLoginWiring(ctx.config, ctx.log, options.localClient);
  // The views read from the replica of DATABASE_READ_URL; login, sessions and the requests (a client reads its own) stay on the primary.
  const reads = readsOf(ctx);
  return [
    portalLoginRoutes(ctx, wiring),
    portalClaimsRoutes(ctx, wiring),
    portalSessionRoutes(ctx, wiring),
    portalMeRoutes(ctx),
    portalNodeRoutes(reads),
    portalRequestRoutes(ctx),
    portalObserveRoutes(ctx),
    portalFleetViewRoutes(reads),
    portalFlapViewRoutes(reads),
    portalNotificationRoutes(ctx),
  ];
}
