import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { policyRoutes } from './policies.js';
import { requestListRoute } from './requests.js';

/** The autopeering administration under `/admin/autopeering` (the portal API is document 3's `/autopeering`). */
export function autopeeringAdminRoutes(ctx: ServiceContext): ApiRouter {
  const r = new ApiRouter('/control/v1');
  policyRoutes(r, ctx);
  requestListRoute(r, ctx);
  return r;
}
