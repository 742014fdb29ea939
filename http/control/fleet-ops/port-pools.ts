import { PORT_POOLS } from '../../../domain/node/port-policy.js';
import type { ApiRouter } from '../../shared/routes.js';
import { ADMIN } from '../fleet/common.js';
import { PortPools, TAGS } from './schemas.js';

/** `GET /admin/fleet/port-pools`: the WireGuard listen-port pools, the same constants the port policy checks against. */
export function portPoolsRoute(r: ApiRouter): void {
  r.route({
    method: 'get',
    path: '/admin/fleet/port-pools',
    summary: 'WireGuard listen-port pools per scope (external, internal)',
    security: ADMIN,
    tags: TAGS.operations,
    responses: { 200: PortPools },
    handler: (_req, res) => {
      res.json({ pools: PORT_POOLS });
    },
  });
}
