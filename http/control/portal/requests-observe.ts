import { Type } from '@sinclair/typebox';
import { reportedProtocolNames } from '../../../domain/desired-state/bird-names.js';
import { NotFound } from '../../../domain/errors.js';
import { bucketStarts, gridEndingAt, TRAFFIC_GRIDS, TRAFFIC_RANGES, type TrafficRange } from '../../../domain/series/grid.js';
import { DEFAULT_AUTOPEERING_POLICY } from '../../../domain/autopeering/policy.js';
import { peerRoutes } from '../../../infra/telemetry/peer-routes.js';
import { routeCountCells } from '../../../infra/telemetry/route-counts.js';
import { interfaceBytesBetween, interfaceRates } from '../../../infra/telemetry/series-queries.js';
import { getPolicy } from '../../../projections/autopeering/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { throwIt } from '../../shared/errors.js';
import { ApiRouter } from '../../shared/routes.js';
import { IdParam, intParam } from '../fleet/common.js';
import { NullableNumber, round3 } from '../ui/series-params.js';
import { PORTAL_NO_ASN, PORTAL_UNAUTHORIZED, requireVerifiedAsn } from './auth.js';
import { portalRows, type PortalRequestRow } from './requests-read.js';
import { PORTAL_SECURITY, PORTAL_TAGS } from './schemas.js';
import { runPortalProbe } from './probe-run.js';
import { LatencyProbeSchema, MtuProbeSchema } from './requests-schemas.js';

/**
 * Observation of one request of the session's AS (document 3, "Autopeering
 * portal API"): its WireGuard interface's traffic. Another AS's request is as
 * unknown as a missing one (404, like the detail).
 */

const RequestParams = IdParam('request_id');
const unknownRequest = (id: number) => new NotFound(`unknown autopeering request ${id}`);

const ObservationRange = Type.Union(
  TRAFFIC_RANGES.map((r) => Type.Literal(r)),
  { description: 'portal observation range: 6h (5 min buckets), 24h (10 min), 7d (1 h), 30d (4 h)' },
);
const RangeQuery = Type.Object({ range: Type.Optional(ObservationRange) }, { additionalProperties: false });
const DEFAULT_RANGE: TrafficRange = '24h';

const Epoch = Type.Integer({ description: 'epoch seconds' });
const Usage = Type.Object({
  from: Epoch,
  to: Epoch,
  rx_bytes: Type.Number({ minimum: 0 }),
  tx_bytes: Type.Number({ minimum: 0 }),
});
const RatePoint = Type.Object({ t: Epoch, rx_bytes_per_sec: NullableNumber, tx_bytes_per_sec: NullableNumber });

export const RequestTrafficSchema = Type.Object({
  request_id: Type.Integer(),
  node_id: Type.String(),
  interface: Type.Union([Type.String(), Type.Null()], { description: "the request's WireGuard interface; null: not known (no series)" }),
  range: ObservationRange,
  bucket_seconds: Type.Integer(),
  current: Type.Union([RatePoint, Type.Null()], { description: 'the newest measured 5-minute bucket (this one or the one before); null: not measured' }),
  usage: Type.Object({
    hour: Usage,
    day: Usage,
    month: Usage,
    monthly_quota_gb: Type.Union([Type.Integer(), Type.Null()], { description: "the node's autopeering policy quota (display only); null: none" }),
  }),
  points: Type.Array(RatePoint, { description: 'one point per bucket, ascending; null where nothing was measured (a gap, not 0)' }),
});

const NullableCount = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]);
export const RequestMetricsSchema = Type.Object({
  request_id: Type.Integer(),
  node_id: Type.String(),
  sessions: Type.Array(Type.String(), { description: "the request's BGP sessions, summed per family" }),
  range: ObservationRange,
  bucket_seconds: Type.Integer(),
  points: Type.Array(
    Type.Object({
      t: Epoch,
      imported_v4: NullableCount,
      imported_v6: NullableCount,
      exported_v4: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'null when not reported (agents before 1.0.233)' }),
      exported_v6: NullableCount,
    }),
    { description: 'one point per bucket, ascending: the newest counts in the bucket; null where none was reported (a gap or an older agent, not 0)' },
  ),
});

const FAMILY_COUNTS = ['imported_v4', 'imported_v6', 'exported_v4', 'exported_v6'] as const;

async function metricsOf(ctx: ServiceContext, row: PortalRequestRow, range: TrafficRange) {
  const grid = gridEndingAt(TRAFFIC_GRIDS[range], ctx.now());
  const cells = await routeCountCells(ctx.pool, row.node_id, row.session_names.flatMap(reportedProtocolNames), grid);
  const byBucket = new Map<number, typeof cells>();
  for (const c of cells) byBucket.set(c.b, [...(byBucket.get(c.b) ?? []), c]);
  return {
    request_id: row.id!,
    node_id: row.node_id,
    sessions: row.session_names,
    range,
    bucket_seconds: grid.bucket_seconds,
    points: bucketStarts(grid).map((t) => {
      const here = byBucket.get(t) ?? [];
      const sum = (k: (typeof FAMILY_COUNTS)[number]) => {
        const values = here.map((c) => c[k]).filter((v): v is number => v !== null);
        return values.length === 0 ? null : values.reduce((a, b) => a + b, 0);
      };
      return { t, ...Object.fromEntries(FAMILY_COUNTS.map((k) => [k, sum(k)])) };
    }),
  };
}

/** `/routes` paging (document 3 leaves it open): limit 1 to 500, default 100; offset from 0. */
export const ROUTES_PAGE = { defaultLimit: 100, maxLimit: 500 } as const;
const RoutesQuery = Type.Object(
  {
    family: Type.Union([Type.Literal('4'), Type.Literal('6')], { description: 'address family' }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: ROUTES_PAGE.maxLimit, default: ROUTES_PAGE.defaultLimit })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 })),
  },
  { additionalProperties: false },
);
export const RequestRoutesSchema = Type.Object({
  request_id: Type.Integer(),
  node_id: Type.String(),
  sessions: Type.Array(Type.String()),
  family: Type.Union([Type.Literal(4), Type.Literal(6)]),
  captured_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: "the node's latest routing table; null: none yet" }),
  total: Type.Integer({ minimum: 0 }),
  limit: Type.Integer(),
  offset: Type.Integer(),
  routes: Type.Array(
    Type.Object({
      prefix: Type.String(),
      origin_asn: Type.Union([Type.Integer(), Type.Null()]),
      as_path: Type.Array(Type.Integer()),
      rpki: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});

const FIVE_MINUTES = 300;

/** The request of the AS (404 otherwise). */
async function requestOf(ctx: ServiceContext, asn: number, id: number): Promise<PortalRequestRow> {
  const [row] = await portalRows(ctx.pool, asn, id);
  return row ?? throwIt(unknownRequest(id));
}

async function trafficOf(ctx: ServiceContext, row: PortalRequestRow, range: TrafficRange) {
  const now = ctx.now();
  const grid = gridEndingAt(TRAFFIC_GRIDS[range], now);
  const fine = gridEndingAt({ bucket_seconds: FIVE_MINUTES, points: 2 }, now);
  const end = fine.start + 2 * FIVE_MINUTES;
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) / 1000;
  const policy = await getPolicy(ctx.pool, row.node_id);
  const quota = { ...DEFAULT_AUTOPEERING_POLICY, ...(policy?.policy ?? {}) }.monthly_quota_gb;
  const ref = row.interface_name === null ? null : { node_id: row.node_id, interface: row.interface_name };
  const usage = async (from: number) => {
    const bytes = ref ? await interfaceBytesBetween(ctx.pool, ref, from, end) : { rx: 0, tx: 0 };
    return { from, to: end, rx_bytes: bytes.rx, tx_bytes: bytes.tx };
  };
  const cells = new Map(ref ? (await interfaceRates(ctx.pool, grid, [ref])).map((c) => [c.b, c]) : []);
  const recent = ref ? new Map((await interfaceRates(ctx.pool, fine, [ref])).map((c) => [c.b, c])) : new Map();
  const newest = bucketStarts(fine)
    .reverse()
    .find((t) => recent.has(t));
  const point = (t: number, c: { rx: number; tx: number } | undefined) => ({
    t,
    rx_bytes_per_sec: c ? round3(c.rx) : null,
    tx_bytes_per_sec: c ? round3(c.tx) : null,
  });
  return {
    request_id: row.id!,
    node_id: row.node_id,
    interface: row.interface_name,
    range,
    bucket_seconds: grid.bucket_seconds,
    current: newest === undefined ? null : point(newest, recent.get(newest)),
    usage: {
      hour: await usage(end - 3600),
      day: await usage(end - 86_400),
      month: await usage(monthStart),
      monthly_quota_gb: quota,
    },
    points: bucketStarts(grid).map((t) => point(t, cells.get(t))),
  };
}

const PROBE_ERRORS = {
  ...PORTAL_UNAUTHORIZED,
  ...PORTAL_NO_ASN,
  404: 'unknown autopeering request <id>',
  409: 'node <id> has no connected agent / autopeering request <id> is not provisioned',
  429: '<kind> probe cooldown: one per request every 10 minutes; retry in <n> s (Retry-After header); or the probe job quota',
  504: 'the agent did not finish the <kind> probe in time',
};

/** `GET /autopeering/requests/{id}/traffic`, `.../metrics`, `.../routes`, `POST .../probe-mtu`, `POST .../probe-latency`. */
export function portalObserveRoutes(ctx: ServiceContext): ApiRouter {
  const common = { tags: PORTAL_TAGS, security: PORTAL_SECURITY, params: RequestParams };
  return new ApiRouter('/control/v1')
    .route({
      ...common,
      method: 'post',
      path: '/autopeering/requests/{request_id}/probe-mtu',
      summary:
        "synchronous path-MTU probe from the node to the peer's tunnel address (DF ping bisection up to the tunnel MTU, up to about 60 s); 10-minute cooldown",
      responses: { 200: MtuProbeSchema, ...PROBE_ERRORS },
      handler: async (req, res) => {
        const who = requireVerifiedAsn(res);
        const row = await requestOf(ctx, who.asn, intParam(req.params.request_id));
        res.json(await runPortalProbe(ctx, row, 'mtu', { res }));
      },
    })
    .route({
      ...common,
      method: 'post',
      path: '/autopeering/requests/{request_id}/probe-latency',
      summary: "synchronous 10-packet ping from the node to the peer's tunnel address (about 10 s); 10-minute cooldown",
      responses: { 200: LatencyProbeSchema, ...PROBE_ERRORS },
      handler: async (req, res) => {
        const who = requireVerifiedAsn(res);
        const row = await requestOf(ctx, who.asn, intParam(req.params.request_id));
        res.json(await runPortalProbe(ctx, row, 'latency', { res }));
      },
    })
    .route({
      ...common,
      method: 'get',
      path: '/autopeering/requests/{request_id}/routes',
      summary: "routes the node learnt from the peer (the request's sessions) in its latest routing table, by prefix",
      query: RoutesQuery,
      responses: {
        200: RequestRoutesSchema,
        ...PORTAL_UNAUTHORIZED,
        ...PORTAL_NO_ASN,
        404: 'unknown autopeering request <id>',
        422: 'family missing or not 4 or 6, limit outside 1 to 500, negative offset',
      },
      handler: async (req, res) => {
        const who = requireVerifiedAsn(res);
        const row = await requestOf(ctx, who.asn, intParam(req.params.request_id));
        const q = req.validQuery as { family: '4' | '6'; limit?: number; offset?: number };
        const family = Number(q.family) as 4 | 6;
        const page = { limit: q.limit ?? ROUTES_PAGE.defaultLimit, offset: q.offset ?? 0 };
        const found = await peerRoutes(
          ctx.pool,
          row.node_id,
          row.status === 'provisioned' ? row.session_names.flatMap(reportedProtocolNames) : [],
          family,
          page,
        );
        res.setHeader('Cache-Control', 'no-store');
        res.json({ request_id: row.id!, node_id: row.node_id, sessions: row.session_names, family, ...page, ...found });
      },
    })
    .route({
      ...common,
      method: 'get',
      path: '/autopeering/requests/{request_id}/metrics',
      summary:
        "route counts of the request's sessions per address family over time (imported; exported from agent 1.0.233 on, null before), on the range's grid",
      query: RangeQuery,
      responses: { 200: RequestMetricsSchema, ...PORTAL_UNAUTHORIZED, ...PORTAL_NO_ASN, 404: 'unknown autopeering request <id>', 422: 'invalid range' },
      handler: async (req, res) => {
        const who = requireVerifiedAsn(res);
        const row = await requestOf(ctx, who.asn, intParam(req.params.request_id));
        res.setHeader('Cache-Control', 'no-store');
        res.json(await metricsOf(ctx, row, (req.validQuery as { range?: TrafficRange }).range ?? DEFAULT_RANGE));
      },
    })
    .route({
      ...common,
      method: 'get',
      path: '/autopeering/requests/{request_id}/traffic',
      summary:
        "the request's WireGuard traffic: current rate, usage of the last hour, the last day and the calendar month (UTC) with the quota, rates on the range's grid",
      query: RangeQuery,
      responses: { 200: RequestTrafficSchema, ...PORTAL_UNAUTHORIZED, ...PORTAL_NO_ASN, 404: 'unknown autopeering request <id>', 422: 'invalid range' },
      handler: async (req, res) => {
        const who = requireVerifiedAsn(res);
        const row = await requestOf(ctx, who.asn, intParam(req.params.request_id));
        res.setHeader('Cache-Control', 'no-store');
        res.json(await trafficOf(ctx, row, (req.validQuery as { range?: TrafficRange }).range ?? DEFAULT_RANGE));
      },
    });
}
