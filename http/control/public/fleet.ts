import { Type } from '@sinclair/typebox';
import { PUBLIC_FLEET_ROW_FIELDS, publicFleet } from '../../../domain/public/fleet-overview.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { PublicCache, sendCached } from './cache.js';
import { loadFleetFacts } from './facts.js';

/** Document 2, Limits: public fleet cache 60 s. */
export const FLEET_CACHE_SECONDS = 60;

const Count = Type.Integer({ minimum: 0 });
const PublicFleetSchema = Type.Object({
  generated_at: Type.String({ format: 'date-time', description: 'when the overview was computed' }),
  summary: Type.Object(
    {
      total: { ...Count, description: 'nodes' },
      ok: { ...Count, description: 'nodes with health ok' },
      degraded: { ...Count, description: 'nodes with health degraded' },
      stale: { ...Count, description: 'nodes with health stale' },
      down: { ...Count, description: 'nodes with health down' },
      unknown: { ...Count, description: 'nodes that never reported' },
    },
    { description: 'nodes by health' },
  ),
  agent_summary: Type.Object(
    {
      online: { ...Count, description: 'agents with a fresh heartbeat' },
      stale: { ...Count, description: 'agents with an old heartbeat' },
      offline: { ...Count, description: 'agents without a recent heartbeat' },
      agents_behind: { ...Count, description: 'agents below the target version' },
    },
    { description: 'agents by liveness' },
  ),
  nodes: Type.Array(Type.Object({}, { description: `rows with exactly: ${PUBLIC_FLEET_ROW_FIELDS.join(', ')}` })),
  links: Type.Array(Type.Object({ a: Type.String({ description: 'node id' }), b: Type.String({ description: 'node id' }) }), {
    description: 'internal WireGuard adjacencies between nodes',
  }),
});

/** `GET /public/fleet`: no auth, the fleet overview of active nodes behind its allow-list, cached 60 s. */
export function publicFleetRoute(r: ApiRouter, ctx: ServiceContext): void {
  const cache = new PublicCache(FLEET_CACHE_SECONDS * 1000, ctx.now, async (at) => {
    const { facts, targetVersion } = await loadFleetFacts(ctx.pool, at);
    return publicFleet(facts, { generatedAt: at, targetVersion });
  });
  r.route({
    method: 'get',
    path: '/public/fleet',
    summary: 'fleet overview for the portal and the site: health, geo, adjacency; never addresses, endpoints or keys (Cache-Control: public, max-age=60)',
    tags: ['public'],
    responses: { 200: PublicFleetSchema },
    handler: (req, res) => sendCached(cache, `public, max-age=${FLEET_CACHE_SECONDS}`, req, res),
  });
}
