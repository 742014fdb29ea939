import { fleetRouting } from '../../../commands/routing.js';
import { NotFound } from '../../../domain/errors.js';
import { nodeGeo } from '../../../domain/public/geo.js';
import { bucketStarts, gridEnd, gridEndingAt, previousGrid, TRAFFIC_GRIDS, type Grid, type TrafficRange } from '../../../domain/series/grid.js';
import { asNames } from '../../../infra/registry/client.js';
import { fleetTopOrigins, type FleetOrigin, type FleetRoutingSummary } from '../../../infra/telemetry/routing-fleet.js';
import { latestRouting, sizeBuckets, topOrigins, type LatestRouting, type OriginCount, type OriginsSort } from '../../../infra/telemetry/routing.js';
import { listNodes } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';
import { nodeOr404 } from '../fleet/common.js';

/**
 * Routing analytics as the console (`/ui`), the admin API (`/admin`) and the
 * peering portal (`/autopeering/fleet`) show them: shared by those faces as
 * equals, so none imports another's files for them. Each builder is
 * the one place its view is made, so `/ui/dashboard`'s `routing` block and
 * `/ui/routing/fleet-overview` (or a node's summary in `/admin` and in its
 * routing dashboard) are the same object by construction.
 */

export const noRoutingTable = (nodeId: string) => new NotFound(`no routing table reported for node ${nodeId}`);

/** The node's latest table: 404 `unknown node <id>` or `no routing table reported for node <id>`. */
export async function latestRoutingOr404(ctx: ServiceContext, nodeId: string): Promise<LatestRouting> {
  const node = await nodeOr404(ctx, nodeId);
  const latest = (await latestRouting(ctx.pool, [node.node_id])).get(node.node_id);
  if (!latest) throw noRoutingTable(node.node_id);
  return latest;
}

/**
 * as-names of `asns` from the registry replica; null when no replica is attached
 * or it does not answer (names are enrichment: a view never fails for want of them).
 */
export async function originNames(ctx: ServiceContext, asns: readonly number[]): Promise<ReadonlyMap<number, string> | null> {
  if (asns.length === 0) return new Map();
  try {
    return await asNames(ctx.config, asns, ctx.log);
  } catch (err) {
    ctx.log.warn({ err }, 'registry names unavailable; origin names left null');
    return null;
  }
}

/** The node summary of `/admin/nodes/{id}/routing/summary`. */
export function nodeSummaryView(latest: LatestRouting) {
  return {
    node_id: latest.node_id,
    observation_id: latest.id,
    captured_at: latest.captured_at,
    received_at: latest.received_at,
    rpki_observed: latest.rpki_observed,
    ...latest.summary,
    announced: latest.announced,
    withdrawn: latest.withdrawn,
  };
}

export type Named<T extends OriginCount> = T & { name: string | null };

/** Origin rows with their registry names (null without a replica or for an AS without one), `name` second. */
async function withNames<T extends OriginCount>(ctx: ServiceContext, origins: readonly T[]): Promise<Named<T>[]> {
  const names = await originNames(
    ctx,
    origins.map((o) => o.asn),
  );
  return origins.map(({ asn, ...rest }) => ({ asn, name: names?.get(asn) ?? null, ...rest }) as Named<T>);
}

/** Top origins of one node's table with registry names. */
export async function nodeOriginsView(ctx: ServiceContext, nodeId: string, limit: number, sort: OriginsSort = 'count'): Promise<Named<OriginCount>[]> {
  return withNames(ctx, await topOrigins(ctx.pool, nodeId, limit, sort));
}

// ---- Trend on the console's grid (domain/series/grid.ts, the traffic ranges and widths) ----

export interface SizePoint {
  at: string;
  size: number | null;
  size_v4: number | null;
  size_v6: number | null;
}
export interface ChurnPoint extends SizePoint {
  announced: number | null;
  withdrawn: number | null;
}

/** The table size per bucket of `grid`: the last observation of each bucket, churn summed; a bucket without one is null. */
async function sizeGrid(ctx: ServiceContext, nodeId: string | null, grid: Grid): Promise<ChurnPoint[]> {
  const rows = await sizeBuckets(ctx.pool, nodeId, grid.start, gridEnd(grid), grid.bucket_seconds);
  return bucketStarts(grid).map((t) => {
    const r = rows.get(t);
    return {
      at: new Date(t * 1000).toISOString(),
      size: r?.size ?? null,
      size_v4: r?.size_v4 ?? null,
      size_v6: r?.size_v6 ?? null,
      announced: r?.announced ?? null,
      withdrawn: r?.withdrawn ?? null,
    };
  });
}

/** A node's routing trend: size and churn per bucket, and the preceding window when `compare`. */
export async function nodeRoutingTimeline(ctx: ServiceContext, nodeId: string, range: TrafficRange, compare: boolean) {
  const grid = gridEndingAt(TRAFFIC_GRIDS[range], ctx.now());
  const [points, previous] = await Promise.all([sizeGrid(ctx, nodeId, grid), compare ? sizeGrid(ctx, nodeId, previousGrid(grid)) : null]);
  return { range, bucket_seconds: grid.bucket_seconds, points, points_previous: previous };
}

/** `/ui/nodes/{id}/routing/dashboard`: summary, top 50 origins with names, timeline. */
export async function nodeRoutingDashboard(ctx: ServiceContext, nodeId: string, range: TrafficRange, compare: boolean) {
  const latest = await latestRoutingOr404(ctx, nodeId);
  const [origins, timeline] = await Promise.all([nodeOriginsView(ctx, latest.node_id, 50), nodeRoutingTimeline(ctx, latest.node_id, range, compare)]);
  return { generated_at: ctx.now().toISOString(), node_id: latest.node_id, summary: nodeSummaryView(latest), origins, timeline };
}

// ---- Fleet ----

/** One row per node of the fleet (creation order); a node that never sent a table has nulls. */
export async function fleetRoutingRows(ctx: ServiceContext) {
  const nodes = await listNodes(ctx.pool);
  const latest = await latestRouting(ctx.pool);
  return nodes.map((node) => {
    const l = latest.get(node.node_id);
    return {
      node_id: node.node_id,
      captured_at: l?.captured_at ?? null,
      received_at: l?.received_at ?? null,
      rpki_observed: l?.rpki_observed ?? null,
      size: l?.size ?? null,
      size_v4: l?.size_v4 ?? null,
      size_v6: l?.size_v6 ?? null,
      as_count: l?.summary.as_count ?? null,
      rpki: l?.summary.rpki ?? null,
      announced: l?.announced ?? null,
      withdrawn: l?.withdrawn ?? null,
      geo: nodeGeo(node),
    };
  });
}

export interface FleetRoutingBlock {
  captured_at: string | null;
  summary: FleetRoutingSummary;
  trend: SizePoint[];
  origins: Named<FleetOrigin>[];
}

export interface FleetRoutingOptions {
  range: TrafficRange;
  origins_top: number;
  origins_sort: OriginsSort;
}

/**
 * The fleet's routing: the union of every node's latest table (summary, as of
 * the latest refresh), its size per bucket (trend) and the top origin ASNs with
 * names. This is the `routing` block of `/ui/dashboard` and the body of
 * `/ui/routing/fleet-overview`.
 */
export async function fleetRoutingBlock(ctx: ServiceContext, options: FleetRoutingOptions): Promise<FleetRoutingBlock> {
  // The origins after the view: reading it computes the union when none is stored.
  const fleet = await fleetRouting(ctx.pool, ctx.now());
  const [trend, origins] = await Promise.all([
    sizeGrid(ctx, null, gridEndingAt(TRAFFIC_GRIDS[options.range], ctx.now())),
    fleetTopOrigins(ctx.pool, options.origins_top, options.origins_sort),
  ]);
  return {
    captured_at: fleet.captured_at,
    summary: fleet.summary,
    trend: trend.map(({ at, size, size_v4, size_v6 }) => ({ at, size, size_v4, size_v6 })),
    origins: await withNames(ctx, origins),
  };
}
