import { Type, type Static } from '@sinclair/typebox';
import { bucketStarts, type Grid, type TrafficRange } from '../../../domain/series/grid.js';
import type { Queryable } from '../../../infra/db/pool.js';
import { trafficRates, type Rate } from '../../../infra/telemetry/series-queries.js';
import { iso, NullableNumber, round3, trafficGrids, type TrendQuery } from './series-params.js';

export const TrafficPoint = Type.Object({
  at: Type.String({ description: 'bucket start' }),
  rx_bytes_per_sec: NullableNumber,
  tx_bytes_per_sec: NullableNumber,
});
export type TrafficPoint = Static<typeof TrafficPoint>;
const Points = Type.Array(TrafficPoint);

export const TrafficTrend = Type.Object({
  range: Type.Union([Type.String(), Type.Null()], { description: 'null: the default window (last 120 five-minute buckets)' }),
  bucket_seconds: Type.Integer(),
  points: Points,
  points_previous: Type.Union([Points, Type.Null()], { description: 'with compare=1, else null' }),
});
export interface TrafficTrend {
  range: TrafficRange | null;
  bucket_seconds: number;
  points: TrafficPoint[];
  points_previous: TrafficPoint[] | null;
}

/** Rates placed on the grid: one point per bucket, null where nothing was measured (a gap, not 0). */
export function trafficPoints(grid: Grid, rates: ReadonlyMap<number, Rate>): TrafficPoint[] {
  return bucketStarts(grid).map((t) => {
    const r = rates.get(t);
    return { at: iso(t), rx_bytes_per_sec: r ? round3(r.rx) : null, tx_bytes_per_sec: r ? round3(r.tx) : null };
  });
}

/** Throughput of the fleet (`nodeIds` null) or of some nodes on the query's grid, with the previous window when compared. */
export async function trafficTrend(db: Queryable, query: TrendQuery, now: Date, nodeIds: readonly string[] | null): Promise<TrafficTrend> {
  const { grid, previous } = trafficGrids(query, now);
  const [current, before] = await Promise.all([trafficRates(db, grid, nodeIds), previous ? trafficRates(db, previous, nodeIds) : null]);
  return {
    range: query.range ?? null,
    bucket_seconds: grid.bucket_seconds,
    points: trafficPoints(grid, current),
    points_previous: previous && before ? trafficPoints(previous, before) : null,
  };
}
