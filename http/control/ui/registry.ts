import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';

/** `/control/v1/ui/registry/*`: the console's proxy to the registry replica. */
export function registryProxyRoutes(_ctx: ServiceContext): ApiRouter {
  return new ApiRouter('/control/v1');
}
