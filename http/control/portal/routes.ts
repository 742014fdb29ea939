import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { portalMeRoutes } from './me.js';
import { portalNodeRoutes } from './nodes.js';
import { portalRequestRoutes } from './requests.js';

/**
 * Every router of the portal API (`/control/v1/autopeering/...`), mounted by
 * `createControlApp` behind `portalGate`: a route here needs a portal session
 * unless auth.ts lists it as open. Add a new portal router to this list.
 */
export function portalRoutes(ctx: ServiceContext): ApiRouter[] {
  return [portalMeRoutes(ctx), portalNodeRoutes(ctx), portalRequestRoutes(ctx)];
}
