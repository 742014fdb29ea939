import { Type } from '@sinclair/typebox';
import { DEFAULT_TRAFFIC_GRID, gridEndingAt, previousGrid, TRAFFIC_GRIDS, TRAFFIC_RANGES, type Grid, type TrafficRange } from '../../../domain/series/grid.js';

/** Query parameters shared by the trend endpoints (document 3, shared conventions). */
export const TrafficRangeParam = Type.Union(
  TRAFFIC_RANGES.map((r) => Type.Literal(r)),
  { description: 'window: 6h (5 min buckets, 72), 24h (10 min, 144), 7d (1 h, 168), 30d (4 h, 180); without it the last 120 five-minute buckets' },
);
export const CompareParam = Type.Union([Type.Literal('0'), Type.Literal('1')], {
  description: '1 adds points_previous: the preceding window, same bucket size and count, index-aligned',
});

export interface TrendQuery {
  range?: TrafficRange;
  compare?: '0' | '1';
}

/** The grid of a traffic trend now, and the preceding one when compared. */
export function trafficGrids(query: TrendQuery, now: Date): { grid: Grid; previous: Grid | null } {
  const grid = gridEndingAt(query.range ? TRAFFIC_GRIDS[query.range] : DEFAULT_TRAFFIC_GRID, now);
  return { grid, previous: query.compare === '1' ? previousGrid(grid) : null };
}

export const NullableNumber = Type.Union([Type.Number(), Type.Null()]);
export const iso = (epochSeconds: number): string => new Date(epochSeconds * 1000).toISOString();
/** Rates keep three decimals: bytes per second need no more, and sums of floats stay readable. */
export const round3 = (x: number | null): number | null => (x === null ? null : Math.round(x * 1000) / 1000);
