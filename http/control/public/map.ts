import { Type } from '@sinclair/typebox';
import { buildPublicMap } from '../../../domain/public/map.js';
import type { ServiceContext } from '../../shared/context.js';
import type { ApiRouter } from '../../shared/routes.js';
import { PublicCache, sendCached } from './cache.js';
import { loadFleetFacts } from './facts.js';

/** Document 2, Limits: public map cache 300 s. */
export const MAP_CACHE_SECONDS = 300;

const Point = Type.Object({
  label: Type.String({ description: 'city code; same-city nodes fold into one point' }),
  lat: Type.Number({ description: 'latitude, 1 decimal' }),
  lon: Type.Number({ description: 'longitude, 1 decimal' }),
  city: Type.String({ description: 'city name (English)' }),
  country: Type.String({ description: 'ISO 3166-1 alpha-2 code' }),
  region: Type.Union([Type.Integer(), Type.Null()], { description: 'dn42 region number, or null' }),
  online: Type.Boolean({ description: 'a node of the point has health `ok` or `degraded`' }),
  sessions: Type.Integer({ description: 'established BGP sessions of its nodes' }),
});

const PublicMapSchema = Type.Object({
  asn: Type.Union([Type.Integer(), Type.Null()], { description: "the network's AS (from the node spec); null without nodes" }),
  updated_at: Type.String({ format: 'date-time', description: 'when this document was generated; on a cache hit, the time it was cached' }),
  stats: Type.Object(
    {
      nodes_online: Type.Integer({ description: 'physical nodes with health `ok` or `degraded`' }),
      bgp_sessions: Type.Integer({ description: 'established sessions, iBGP plus eBGP' }),
      routes: Type.Integer({ description: 'median table size across nodes' }),
    },
    { description: 'network figures' },
  ),
  nodes: Type.Array(Point, { description: 'points sorted by label' }),
  links: Type.Array(Type.Tuple([Type.String(), Type.String()]), { description: 'pairs `[a, b]` of labels with a < b, sorted, deduplicated, no self-loops' }),
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
