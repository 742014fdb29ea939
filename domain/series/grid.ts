/**
 * The one time grid of every console trend (document 3, "Shared conventions of
 * the console layer"): a fixed number of buckets of one width, aligned to
 * multiples of that width since the epoch, ascending, at most 200 points, the
 * last bucket the one holding `now` (it fills as samples arrive). An empty bucket
 * is null, never 0. `compare=1` adds the directly preceding window: same width,
 * same count, index-aligned with the current one.
 */

export const MAX_GRID_POINTS = 200;

export interface GridSpec {
  /** Bucket width in seconds. */
  bucket_seconds: number;
  points: number;
}

/** Ranges of the traffic trends (`/ui/fleet/traffic`, `/ui/nodes/{id}/traffic`, the dashboard); widths as the flap-stats archive draws them (docs/decisions.md, "Console layer"). */
export const TRAFFIC_RANGES = ['6h', '24h', '7d', '30d'] as const;
export type TrafficRange = (typeof TRAFFIC_RANGES)[number];
export const TRAFFIC_GRIDS: Readonly<Record<TrafficRange, GridSpec>> = {
  '6h': { bucket_seconds: 300, points: 72 },
  '24h': { bucket_seconds: 600, points: 144 },
  '7d': { bucket_seconds: 3600, points: 168 },
  '30d': { bucket_seconds: 14_400, points: 180 },
};
/** Without `range`: the last 120 buckets of 5 minutes (document 3, Limits). */
export const DEFAULT_TRAFFIC_GRID: GridSpec = { bucket_seconds: 300, points: 120 };

/** Ranges of the node metrics matrix, with the contract's fixed widths. */
export const METRICS_RANGES = ['1h', '6h', '24h', '7d'] as const;
export type MetricsRange = (typeof METRICS_RANGES)[number];
export const METRICS_GRIDS: Readonly<Record<MetricsRange, GridSpec>> = {
  '1h': { bucket_seconds: 300, points: 12 },
  '6h': { bucket_seconds: 600, points: 36 },
  '24h': { bucket_seconds: 1800, points: 48 },
  '7d': { bucket_seconds: 10_800, points: 56 },
};

/** A placed grid: bucket starts `start + i * bucket_seconds` for i in [0, points), epoch seconds. */
export interface Grid extends GridSpec {
  start: number;
}

/** The grid whose last bucket holds `now`. */
export function gridEndingAt(spec: GridSpec, now: Date): Grid {
  if (spec.points < 1 || spec.points > MAX_GRID_POINTS) throw new RangeError(`a grid has 1 to ${MAX_GRID_POINTS} points, not ${spec.points}`);
  const w = spec.bucket_seconds;
  const last = Math.floor(now.getTime() / 1000 / w) * w;
  return { ...spec, start: last - (spec.points - 1) * w };
}

/** The directly preceding window: same width and count, ending where `grid` starts. */
export function previousGrid(grid: Grid): Grid {
  return { ...grid, start: grid.start - grid.points * grid.bucket_seconds };
}

/** The first instant after the grid (exclusive end), epoch seconds. */
export const gridEnd = (grid: Grid): number => grid.start + grid.points * grid.bucket_seconds;

/** Bucket starts in epoch seconds, ascending. */
export function bucketStarts(grid: Grid): number[] {
  return Array.from({ length: grid.points }, (_, i) => grid.start + i * grid.bucket_seconds);
}

/** Index of the bucket holding `epochSeconds`, or -1 outside the grid. */
export function bucketIndex(grid: Grid, epochSeconds: number): number {
  const i = Math.floor((epochSeconds - grid.start) / grid.bucket_seconds);
  return i >= 0 && i < grid.points ? i : -1;
}

/** Values placed on the grid by bucket start (epoch seconds); buckets without a value are null. */
export function onGrid<T>(grid: Grid, values: ReadonlyMap<number, T>): (T | null)[] {
  return bucketStarts(grid).map((t) => values.get(t) ?? null);
}

/**
 * Rollup widths kept next to the raw samples (seconds). Every grid width above is
 * a multiple of one of them, and a grid reads the widest that divides its width:
 * a 30-day trend reads 180 rows per series, not 8,640. The day serves sums over a
 * whole window (`tileWindow`), which need no grid.
 */
export const ROLLUP_WIDTHS = [300, 3600, 14_400, 86_400] as const;
export type RollupWidth = (typeof ROLLUP_WIDTHS)[number];

export function rollupWidthFor(bucketSeconds: number): RollupWidth {
  const fitting = ROLLUP_WIDTHS.filter((w) => bucketSeconds % w === 0);
  if (fitting.length === 0) throw new RangeError(`no rollup divides a ${bucketSeconds} s bucket`);
  return fitting[fitting.length - 1];
}

export interface Tile {
  width: number;
  /** Epoch seconds, [from, to). */
  from: number;
  to: number;
}

/**
 * The fewest rollup rows that cover [start, end) exactly: the widest buckets inside
 * it, the edges with narrower ones. A sum over a 30-day window then reads about 40
 * rows per series instead of 180, over 24 hours about 45 instead of 288.
 */
export function tileWindow(start: number, end: number, widths: readonly number[] = ROLLUP_WIDTHS): Tile[] {
  if (start >= end) return [];
  const [w, ...narrower] = [...widths].sort((a, b) => b - a);
  if (w === undefined) throw new RangeError(`no rollup tiles [${start}, ${end})`);
  const from = Math.ceil(start / w) * w;
  const to = Math.floor(end / w) * w;
  if (from >= to) return tileWindow(start, end, narrower);
  return [...tileWindow(start, from, narrower), { width: w, from, to }, ...tileWindow(to, end, narrower)];
}
