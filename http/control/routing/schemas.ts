import { Type, type TSchema } from '@sinclair/typebox';
import { TRAFFIC_RANGES } from '../../../domain/series/grid.js';
import { RPKI_STATES } from '../../../domain/telemetry/routing.js';
import { component } from '../../shared/routes.js';
import { Geo } from '../ui/schemas.js';

/** Response and query schemas of the routing views (`/admin/.../routing/*`, `/ui/.../routing/*`). */

const N = Type.Integer({ minimum: 0 });
const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const Time = Type.String({ format: 'date-time' });
const closed = { additionalProperties: false } as const;

export const RpkiState = Type.Union(RPKI_STATES.map((s) => Type.Literal(s)));
export const RpkiCounts = Type.Object({ valid: N, invalid: N, not_found: N }, closed);
const LengthCounts = Type.Array(Type.Object({ length: N, count: N }, closed));

export const NodeSummary = Type.Object(
  {
    node_id: Type.String(),
    observation_id: Type.Integer(),
    captured_at: Time,
    received_at: Time,
    rpki_observed: Type.Boolean(),
    size: N,
    size_v4: N,
    size_v6: N,
    local: N,
    external: N,
    as_count: N,
    as_count_v4: N,
    as_count_v6: N,
    rpki: Nullable(RpkiCounts),
    rpki_v4: Nullable(RpkiCounts),
    rpki_v6: Nullable(RpkiCounts),
    prefix_lengths: Type.Object({ v4: LengthCounts, v6: LengthCounts }, closed),
    as_path_lengths: LengthCounts,
    announced: Nullable(N),
    withdrawn: Nullable(N),
  },
  closed,
);

export const NodeOrigin = Type.Object({ asn: Type.Integer(), name: Nullable(Type.String()), count: N, count_v4: N, count_v6: N }, closed);
export const FleetOrigin = component(
  'FleetOrigin',
  Type.Object(
    {
      asn: Type.Integer({ description: 'the origin AS' }),
      name: Type.Union([Type.String(), Type.Null()], { description: 'registry as-name; null without a replica' }),
      count: { ...N, description: 'prefixes it originates' },
      count_v4: { ...N, description: 'of those, IPv4' },
      count_v6: { ...N, description: 'of those, IPv6' },
      nodes: { ...N, description: 'nodes carrying a prefix of it' },
    },
    { ...closed, description: 'an origin AS of the fleet routing tables' },
  ),
);

export const Observation = Type.Object(
  {
    id: Type.Integer(),
    node_id: Type.String(),
    captured_at: Time,
    received_at: Time,
    rpki_observed: Type.Boolean(),
    size: N,
    size_v4: N,
    size_v6: N,
    announced: Nullable(N),
    withdrawn: Nullable(N),
  },
  closed,
);

export const Route = Type.Object(
  {
    prefix: Type.String(),
    family: Type.Union([Type.Literal(4), Type.Literal(6)]),
    protocol: Type.String(),
    origin_asn: Nullable(Type.Integer()),
    as_path: Type.Array(Type.Integer()),
    rpki: Nullable(RpkiState),
    local: Type.Boolean(),
  },
  closed,
);

export const FleetRow = Type.Object(
  {
    node_id: Type.String(),
    captured_at: Nullable(Time),
    received_at: Nullable(Time),
    rpki_observed: Nullable(Type.Boolean()),
    size: Nullable(N),
    size_v4: Nullable(N),
    size_v6: Nullable(N),
    as_count: Nullable(N),
    rpki: Nullable(RpkiCounts),
    announced: Nullable(N),
    withdrawn: Nullable(N),
    geo: Geo,
  },
  closed,
);

export const FleetSummary = Type.Object(
  {
    nodes_reporting: N,
    size: N,
    size_v4: N,
    size_v6: N,
    local: N,
    external: N,
    as_count: N,
    as_count_v4: N,
    as_count_v6: N,
    rpki: Nullable(RpkiCounts),
    rpki_v4: Nullable(RpkiCounts),
    rpki_v6: Nullable(RpkiCounts),
  },
  closed,
);

const SizePoint = Type.Object({ at: Time, size: Nullable(N), size_v4: Nullable(N), size_v6: Nullable(N) }, closed);
const ChurnPoint = Type.Object(
  { at: Time, size: Nullable(N), size_v4: Nullable(N), size_v6: Nullable(N), announced: Nullable(N), withdrawn: Nullable(N) },
  closed,
);

export const NodeTimeline = Type.Object(
  { range: Type.String(), bucket_seconds: N, points: Type.Array(ChurnPoint), points_previous: Nullable(Type.Array(ChurnPoint)) },
  closed,
);

/** The `routing` block of `/ui/dashboard`, and the body of `/ui/routing/fleet-overview` with its `generated_at` and node rows. */
export const FleetRoutingBlock = Type.Object(
  { captured_at: Nullable(Time), summary: FleetSummary, trend: Type.Array(SizePoint), origins: Type.Array(FleetOrigin) },
  closed,
);

/** The routing trend's ranges: the console's trend grid (domain/series/grid.ts); without one, 24h. */
export const RoutingRange = Type.Union(
  TRAFFIC_RANGES.map((r) => Type.Literal(r)),
  { description: 'window: 6h (5 min buckets, 72), 24h (10 min, 144; the default), 7d (1 h, 168), 30d (4 h, 180)' },
);
export const OriginsSort = Type.Union([Type.Literal('count'), Type.Literal('v4'), Type.Literal('v6')]);
/** `origins_top` of the fleet views (contract: 1 to 200, default 100). */
export const OriginsTop = Type.Integer({ minimum: 1, maximum: 200, default: 100 });
