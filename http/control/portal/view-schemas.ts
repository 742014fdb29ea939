import { Type } from '@sinclair/typebox';
import { FleetSummary, RpkiCounts } from '../routing/schemas.js';
import { FlapAlert } from '../ui/flaps/history.js';
import { PeerSession } from '../ui/flap-peers.js';
import { FlatRow } from '../ui/prefix-flaps.js';
import { CompareParam } from '../ui/series-params.js';
import { AgentSummary, Count, Nullable, NullableInteger, NullableNumber, NullableString } from '../ui/schemas.js';

/**
 * Schemas of the portal's read-only network view (`/autopeering/fleet/*`,
 * `/nodes/{node_id}/traffic`, `/my/flaps`): what the allow-lists of
 * allow-lists.ts leave of the console's answers. Closed objects, so the
 * OpenAPI walk of the portal spec fails on a field the allow-list lets through
 * unannounced.
 */

const closed = { additionalProperties: false } as const;

/**
 * Document 3, Limits: the portal's fleet traffic takes `6h` or `24h` only. A
 * type of its own: the per-request observation range (`6h` to `30d`) is another
 * one and the two are never mixed.
 */
export const PORTAL_FLEET_RANGES = ['6h', '24h'] as const;
export type PortalFleetRange = (typeof PORTAL_FLEET_RANGES)[number];
export const PortalFleetRangeParam = Type.Union(
  PORTAL_FLEET_RANGES.map((r) => Type.Literal(r)),
  { default: '24h', description: 'window: 6h (5 min buckets, 72) or 24h (10 min, 144); default 24h' },
);
export const PortalTrendQuery = Type.Object({ range: PortalFleetRangeParam, compare: Type.Optional(CompareParam) }, closed);

const Epoch = Type.Integer({ description: 'bucket start, epoch seconds' });
const Rates = { rx_bytes_per_sec: NullableNumber, tx_bytes_per_sec: NullableNumber };

export const PortalGeo = Nullable(
  Type.Object(
    {
      lat: Type.Number(),
      lon: Type.Number(),
      city: Type.String(),
      country: Type.String({ description: 'ISO 3166-1 alpha-2' }),
      region: NullableInteger,
    },
    closed,
  ),
);

export const PortalOverview = Type.Object(
  {
    generated_at: Type.String(),
    summary: Type.Object({ total: Count, ok: Count, degraded: Count, stale: Count, down: Count, unknown: Count }, closed),
    agent_summary: AgentSummary,
    nodes: Type.Array(
      Type.Object(
        {
          node_id: Type.String(),
          health: Type.String(),
          site: NullableString,
          region: NullableInteger,
          geo: PortalGeo,
          capabilities: Type.Array(Type.String()),
        },
        { ...closed, description: 'document 3: overview node rows keep only these fields' },
      ),
    ),
    links: Type.Array(Type.Object({ a: Type.String(), b: Type.String() }, closed), { description: 'adjacent node pairs, a < b' }),
  },
  { ...closed, description: 'the fleet overview of active nodes' },
);

const TrafficPoint = Type.Object({ t: Epoch, ...Rates }, { ...closed, description: 'null rates: nothing measured in the bucket (a gap, not 0)' });
const TrafficPoints = Type.Array(TrafficPoint);
export const PortalTrafficTrend = Type.Object(
  {
    range: Type.Union(PORTAL_FLEET_RANGES.map((r) => Type.Literal(r))),
    bucket_seconds: Type.Integer(),
    points: TrafficPoints,
    points_previous: Type.Union([TrafficPoints, Type.Null()], { description: 'with compare=1, else null' }),
  },
  closed,
);
export const PortalNodeTraffic = Type.Object({ node_id: Type.String(), ...PortalTrafficTrend.properties }, closed);

export const PortalTrafficBreakdown = Type.Object(
  {
    generated_at: Type.String(),
    totals: Type.Object(Rates, closed),
    nodes: Type.Array(Type.Object({ node_id: Type.String(), sampled_at: NullableString, ...Rates, peer_count: Count, geo: PortalGeo }, closed)),
    other: Type.Object({ node_count: Count, ...Rates }, { ...closed, description: 'the nodes beyond `top`, summed' }),
    peers: Type.Array(
      Type.Object({ node_id: Type.String(), interface: Type.String(), ...Rates }, { ...closed, description: 'document 3: no public key, no endpoint' }),
    ),
    peer_total: Count,
  },
  closed,
);

const Bytes = Type.Number({ description: 'bytes counted in the window' });
const AsName = Type.Union([Type.String(), Type.Null()], { description: 'registry as-name; null without a replica or unknown' });
const TrafficByAs = Type.Object(
  {
    series: Type.Array(Type.Object({ asn: Type.Integer(), name: AsName, points: TrafficPoints }, closed)),
    table: Type.Array(Type.Object({ asn: Type.Integer(), name: AsName, rx_bytes: Bytes, tx_bytes: Bytes, share: NullableNumber }, closed)),
  },
  closed,
);
const TrafficMix = Type.Object({ internal_bytes: Bytes, external_bytes: Bytes, rx_bytes: Bytes, tx_bytes: Bytes }, closed);

const N = Type.Integer({ minimum: 0 });
const PortalRouting = Type.Object(
  {
    captured_at: NullableString,
    summary: Type.Object({ ...FleetSummary.properties, rpki: Nullable(RpkiCounts), rpki_v4: Nullable(RpkiCounts), rpki_v6: Nullable(RpkiCounts) }, closed),
    trend: Type.Array(Type.Object({ t: Epoch, size: Nullable(N), size_v4: Nullable(N), size_v6: Nullable(N) }, closed)),
    origins: Type.Array(
      Type.Object(
        { asn: Type.Integer(), name: AsName, count: N, count_v4: N, count_v6: N, nodes: { ...N, description: 'nodes carrying a prefix of it' } },
        closed,
      ),
    ),
  },
  closed,
);

export const PortalDashboard = Type.Object(
  {
    generated_at: Type.String(),
    overview: PortalOverview,
    traffic: PortalTrafficTrend,
    traffic_by_as: Type.Union([TrafficByAs, Type.Null()], { description: 'with as_traffic=1, else null' }),
    traffic_mix: Type.Union([TrafficMix, Type.Null()], { description: 'with as_traffic=1, else null' }),
    routing: PortalRouting,
  },
  closed,
);

export const PortalDashboardQuery = Type.Object(
  {
    range: PortalFleetRangeParam,
    compare: Type.Optional(CompareParam),
    origins_top: Type.Integer({ minimum: 1, maximum: 200, default: 100, description: 'routing.origins rows' }),
    as_traffic: Type.Union([Type.Literal('0'), Type.Literal('1')], { default: '0', description: '1 fills traffic_by_as and traffic_mix (null otherwise)' }),
  },
  closed,
);

export const PortalBreakdownQuery = Type.Object(
  {
    top: Type.Integer({
      minimum: 1,
      maximum: 200,
      default: 25,
      description: 'nodes and peers listed, busiest first; the other nodes are summed into `other`',
    }),
  },
  closed,
);

export const PortalMyFlaps = Type.Object(
  {
    generated_at: Type.String(),
    asn: Type.Integer({ description: "the session's verified ASN" }),
    has_flaps: Type.Boolean({ description: 'false: no flap trace of the AS (no prefix row, session record or kept alert); the lists are empty' }),
    name: NullableString,
    severity: Type.Union([Type.Number(), Type.Null()], { description: 'as the console flap peer row; null without flap traces' }),
    prefix_count: Count,
    prefixes_flapping: Count,
    prefix_score_max: NullableNumber,
    session_score_max: NullableNumber,
    last_change_at: NullableString,
    nodes: Type.Array(Type.String()),
    sessions: Type.Array(PeerSession, { description: 'our eBGP sessions to the AS with their flap scores' }),
    prefixes: Type.Array(FlatRow, { description: 'prefix flap rows entering through the AS (score >= 0.5), localisation included' }),
    alerts: Type.Array(FlapAlert, { description: 'open and resolved, newest first' }),
  },
  closed,
);
