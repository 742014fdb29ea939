import type { FlapStatsRange } from '../../../domain/flaps/flap-stats.js';
import type { ServiceContext } from '../../shared/context.js';
import { ApiRouter } from '../../shared/routes.js';
import { FlapPeerQuery } from '../ui/flap-peers.js';
import { FlapStats, flapStats, FlapStatsQuery } from '../ui/flaps/history.js';
import { PrefixFlaps, PrefixFlapsQuery } from '../ui/prefix-flaps.js';
import { flapPeerDetail } from '../shared/flap-peers.js';
import { fleetPrefixFlapsView } from '../shared/prefix-flaps.js';
import { portalFlapStats, portalMyFlaps, portalPrefixFlaps } from './allow-lists.js';
import { PORTAL_NO_ASN, PORTAL_UNAUTHORIZED, requireVerifiedAsn } from './auth.js';
import { PORTAL_SECURITY, PORTAL_TAGS } from './schemas.js';
import { PortalMyFlaps } from './view-schemas.js';

/** The portal's flap views (document 3, "Read-only network view"): the console's handlers and parameters, answers through the allow-lists. */
export function portalFlapViewRoutes(ctx: ServiceContext): ApiRouter {
  const common = { method: 'get' as const, tags: PORTAL_TAGS, security: PORTAL_SECURITY };
  return new ApiRouter('/control/v1')
    .route({
      ...common,
      path: '/autopeering/fleet/prefix-flaps',
      summary: 'prefix flap rows decayed to now, flat or with group=prefix per prefix, localisation included (as the console)',
      query: PrefixFlapsQuery,
      responses: { 200: PrefixFlaps, ...PORTAL_UNAUTHORIZED, 422: 'invalid min_score, limit or group' },
      handler: async (req, res) => {
        res.json(portalPrefixFlaps(await fleetPrefixFlapsView(ctx, req.validQuery)));
      },
    })
    .route({
      ...common,
      path: '/autopeering/fleet/flap-stats',
      summary: 'flap rate series of complete buckets (1h default, 6h, 24h, 7d, 30d) and the rate gauge (as the console)',
      query: FlapStatsQuery,
      responses: { 200: FlapStats, ...PORTAL_UNAUTHORIZED, 422: 'invalid range' },
      handler: async (req, res) => {
        res.json(portalFlapStats(await flapStats(ctx, req.validQuery.range as FlapStatsRange)));
      },
    })
    .route({
      ...common,
      path: '/autopeering/my/flaps',
      summary: "flap detail of the session's own AS (the console's flap peer detail); no flap traces: 200 with has_flaps false",
      query: FlapPeerQuery,
      responses: { 200: PortalMyFlaps, ...PORTAL_UNAUTHORIZED, ...PORTAL_NO_ASN, 422: 'invalid prefixes_limit or alerts_limit' },
      handler: async (req, res) => {
        const { asn } = requireVerifiedAsn(res);
        const generatedAt = ctx.now().toISOString();
        res.json(portalMyFlaps(asn, generatedAt, await flapPeerDetail(ctx, asn, req.validQuery)));
      },
    });
}
