import { Type } from '@sinclair/typebox';
import { buildPublicMap } from '../../../domain/public/map.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { PublicCache, sendCached } from './cache.js';
import { loadFleetFacts } from './facts.js';

/** Document 2, Limits: public map cache 300 s. */
export const MAP_CACHE_SECONDS = 300;

const Point = Type.Object({
  label: Type.String(),
  lat: Type.Number(),
  lon: Type.Number(),
  city: Type.String(),
  country: Type.String(),
  region: Type.Union([Type.Integer(), Type.Null()]),
  online: Type.Boolean(),
  sessions: Type.Integer(),
});

const PublicMapSchema = Type.Object({
  asn: Type.Union([Type.Integer(), Type.Null()]),
  updated_at: Type.String({ format: 'date-time', description: 'when this document was generated; on a cache hit, the time it was cached' }),
  stats: Type.Object({ nodes_online: Type.Integer(), bgp_sessions: Type.Integer(), routes: Type.Integer() }),
  nodes: Type.Array(Point),
  links: Type.Array(Type.Tuple([Type.String(), Type.String()])),
});

/** `GET /public/map`: no auth, generated at most once per 300 s per instance. */
export function publicMapRoute(r: ApiRouter, ctx: ServiceContext): void {
  const cache = new PublicCache(MAP_CACHE_SECONDS * 1000, ctx.now, async (at) => buildPublicMap((await loadFleetFacts(ctx.pool, at)).facts, at));
  r.route({
    method: 'get',
    path: '/public/map',
    summary: 'world map: fleet ASN, stats, city points and links (Cache-Control: public, max-age=300)',
    tags: ['public'],
    responses: { 200: PublicMapSchema },
    handler: (req, res) => sendCached(cache, `public, max-age=${MAP_CACHE_SECONDS}`, req, res),
  });
}
