import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { consoleAuditRoutes } from './audit.js';
import { consoleFleetRoutes } from './fleet.js';
import { flapHistoryRoutes } from './flaps/history.js';
import { sessionFlapRoutes } from './flaps/routes.js';
import { consoleNodeRoutes } from './nodes.js';
import { sessionRoutes } from './session.js';
import { consoleStatusEventRoutes } from './status-events.js';

/** The console's read views (document 3, `/ui`): session, fleet and node views, status events, audit, session flaps. */
export function consoleViewRoutes(ctx: ServiceContext): ApiRouter[] {
  return [
    sessionRoutes(ctx),
    consoleFleetRoutes(ctx),
    consoleNodeRoutes(ctx),
    consoleStatusEventRoutes(ctx),
    consoleAuditRoutes(ctx),
    sessionFlapRoutes(ctx),
    flapHistoryRoutes(ctx),
  ];
}
