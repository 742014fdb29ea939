import { Type } from '@sinclair/typebox';
import { FLAP_STATS_RANGE_NAMES, FLAP_STATS_RANGES, GAUGE, gridOf, seriesOf, trimmedRate, type FlapStatsRange } from '../../../../domain/flaps/flap-stats.js';
import { flapRateBuckets } from '../../../../infra/telemetry/flap-rate.js';
import { flapAlertPage } from '../../../../projections/flap-alerts/queries.js';
import type { ServiceContext } from '../../../shared/context.js';
import { ApiRouter, component } from '../../../shared/routes.js';
import { Count, NullableInteger, NullableNumber, NullableString, RowId, TAGS, UNAUTHORIZED } from '../schemas.js';

export const FlapAlert = component(
  'FlapAlert',
  Type.Object(
    {
      id: Type.Integer({ description: 'the cursor: page on with before_id = the last id' }),
      kind: Type.Union([Type.Literal('session'), Type.Literal('prefix')], { description: 'a flapping BGP session or a flapping prefix' }),
      node_id: Type.Union([Type.String(), Type.Null()], { description: 'session alerts: the node; null for prefix alerts' }),
      name: Type.Union([Type.String(), Type.Null()], { description: 'session alerts: the BIRD protocol name; null for prefix alerts' }),
      prefix: Type.Union([Type.String(), Type.Null()], { description: 'prefix alerts; null for session alerts' }),
      peer_asn: Type.Union([Type.Integer(), Type.Null()], {
        description:
          'prefix alerts: the peer direction (null: own origin or no attribution); session alerts: the eBGP session remote AS when it opened (null for iBGP)',
      }),
      nodes: Type.Array(Type.String(), { description: 'every node involved while the alert was open' }),
      peak_score: Type.Number({ description: 'highest score seen by the evaluations (about every 60 s)' }),
      last_score: Type.Number({ description: 'the score of the latest evaluation (of the resolution, once resolved)' }),
      started_at: Type.String({ description: 'when the alert opened' }),
      resolved_at: { ...NullableString, description: 'when it was resolved; null while open' },
      active: Type.Boolean({ description: 'resolved_at is null' }),
    },
    { additionalProperties: false },
  ),
);

const Point = Type.Object(
  {
    t: Type.Integer({ description: 'bucket start, epoch seconds' }),
    changes: NullableInteger,
    listed_changes: NullableInteger,
    rate_per_s: NullableNumber,
    tracked_prefixes: NullableInteger,
    flapping_prefixes: NullableInteger,
    flapping_sessions: NullableInteger,
    open_alerts: NullableInteger,
  },
  { additionalProperties: false, description: 'null: no report (feed down or restart) or no sample; 0: measured quiet' },
);

export const FlapStats = Type.Object(
  {
    range: Type.String(),
    window_s: Count,
    bucket_s: Count,
    generated_at: Type.String(),
    series: Type.Array(Point),
    gauge: Type.Object(
      {
        rate_per_s: Type.Number({ description: '90th-percentile trimmed mean of the last 15 complete 60 s buckets (missing count 0), changes per second' }),
        current_rate_per_s: Type.Union([Type.Number(), Type.Null()], { description: 'the last complete 60 s bucket; null when no report landed in it' }),
        percentile: Type.Literal(GAUGE.percentile),
        window_s: Type.Literal(GAUGE.window_s),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** The parameters of `/ui/fleet/flap-stats` (and of the portal's). */
export const FlapStatsQuery = Type.Object(
  {
    range: Type.Union(
      FLAP_STATS_RANGE_NAMES.map((r) => Type.Literal(r)),
      { default: '1h' },
    ),
  },
  { additionalProperties: false },
);

/** `GET /ui/fleet/flap-alerts` and `GET /ui/fleet/flap-stats`: the history of flap detection (document 3). */
export function flapHistoryRoutes(ctx: ServiceContext): ApiRouter {
  const common = { method: 'get' as const, tags: TAGS, security: ['admin'] };
  return new ApiRouter('/control/v1')
    .route({
      ...common,
      path: '/ui/fleet/flap-alerts',
      summary: 'flap alerts newest first (evaluated about every 60 s; the latest 500 resolved kept); page on with before_id = the last id',
      query: Type.Object(
        {
          active: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('1')], { description: '1: open only, 0: resolved only; absent: both' })),
          limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
          before_id: Type.Optional(RowId('only alerts with a smaller id (the last id of the previous page)')),
        },
        { additionalProperties: false },
      ),
      responses: { 200: Type.Object({ alerts: Type.Array(FlapAlert) }), ...UNAUTHORIZED, 422: 'invalid active, limit or before_id' },
      handler: async (req, res) => {
        const { active, limit, before_id } = req.validQuery;
        res.json({ alerts: await flapAlertPage(ctx.pool, { active: active === undefined ? undefined : active === '1', limit, beforeId: before_id }) });
      },
    })
    .route({
      ...common,
      path: '/ui/fleet/flap-stats',
      summary: 'flap rate series of complete buckets (1h: 60 s, 6h: 5 min, 24h: 10 min, 7d: 1 h, 30d: 4 h) and the rate gauge (independent of range)',
      query: FlapStatsQuery,
      responses: { 200: FlapStats, ...UNAUTHORIZED, 422: 'invalid range' },
      handler: async (req, res) => {
        res.json(await flapStats(ctx, req.validQuery.range as FlapStatsRange));
      },
    });
}

const at = (s: number) => new Date(s * 1000);

/** The complete minutes of the gauge's window before `now` (missing ones null). */
async function gaugeMinutes(ctx: Pick<ServiceContext, 'pool'>, now: Date) {
  const gauge = gridOf(GAUGE.bucket_s, GAUGE.window_s / GAUGE.bucket_s, now);
  return seriesOf(gauge.starts, GAUGE.bucket_s, await flapRateBuckets(ctx.pool, at(gauge.from), at(gauge.to), GAUGE.bucket_s));
}

/** The flap-rate gauge's `rate_per_s` now (also `dn42_prefix_flap_changes_per_second` on /metrics). */
export async function flapRateNow(ctx: Pick<ServiceContext, 'pool' | 'now'>): Promise<number> {
  return trimmedRate((await gaugeMinutes(ctx, ctx.now())).map((p) => p.changes));
}

/** `GET /ui/fleet/flap-stats`: the series of complete buckets of `range` and the gauge; also the portal's, through its allow-list. */
export async function flapStats(ctx: ServiceContext, range: FlapStatsRange) {
  const now = ctx.now();
  const { bucket_s, points } = FLAP_STATS_RANGES[range];
  const grid = gridOf(bucket_s, points, now);
  const [stored, recent] = await Promise.all([flapRateBuckets(ctx.pool, at(grid.from), at(grid.to), bucket_s), gaugeMinutes(ctx, now)]);
  return {
    range,
    window_s: points * bucket_s,
    bucket_s,
    generated_at: now.toISOString(),
    series: seriesOf(grid.starts, bucket_s, stored),
    gauge: {
      rate_per_s: trimmedRate(recent.map((p) => p.changes)),
      current_rate_per_s: recent.at(-1)!.rate_per_s,
      percentile: GAUGE.percentile,
      window_s: GAUGE.window_s,
    },
  };
}
