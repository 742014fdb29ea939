import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { publicFleetRoute } from './fleet.js';
import { publicMapRoute } from './map.js';

/** `/public/*`: anonymous, cached per app instance. */
export function publicRoutes(ctx: ServiceContext): ApiRouter {
  const r = new ApiRouter('/control/v1');
  publicMapRoute(r, ctx);
  publicFleetRoute(r, ctx);
  return r;
}
