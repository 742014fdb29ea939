/**
 * `GET /ui/fleet/flap-stats` (document 3): the flap-rate series of a range and
 * the rate gauge, from the 60 s archive. Pure: the archive buckets and the
 * clock come in.
 */

export const FLAP_STATS_RANGES = {
  '1h': { bucket_s: 60, points: 60 },
  '6h': { bucket_s: 300, points: 72 },
  '24h': { bucket_s: 600, points: 144 },
  '7d': { bucket_s: 3600, points: 168 },
  '30d': { bucket_s: 14_400, points: 180 },
} as const;
export type FlapStatsRange = keyof typeof FLAP_STATS_RANGES;
export const FLAP_STATS_RANGE_NAMES = Object.keys(FLAP_STATS_RANGES) as FlapStatsRange[];

/** The gauge: the 90th-percentile trimmed mean over the last 900 s of 60 s buckets. */
export const GAUGE = { percentile: 90, window_s: 900, bucket_s: 60 } as const;

/**
 * A report's changes for the archive: every change the collector saw
 * (`total_changes`) and those of the listed entries (their changes since the
 * previous report, unknown ones left out). An older agent sends no
 * `total_changes`: the listed changes stand in, the best lower bound known. The
 * listed ones are capped at the total so `listed_changes <= changes` holds even
 * for an agent whose counts disagree.
 */
export function reportChanges(totalChanges: number | null, entryChanges: readonly (number | null)[]): [number, number] {
  const listed = entryChanges.reduce<number>((sum, c) => sum + (c ?? 0), 0);
  const total = totalChanges ?? listed;
  return [total, Math.min(listed, total)];
}

/** An archive bucket as stored: changes null when no report landed in it, counts null when the job took no sample. */
export interface StoredBucket {
  t: number;
  changes: number | null;
  listed_changes: number | null;
  tracked_prefixes: number | null;
  flapping_prefixes: number | null;
  flapping_sessions: number | null;
  open_alerts: number | null;
}

export interface FlapStatsPoint extends StoredBucket {
  rate_per_s: number | null;
}

/** The grid of a range: `points` complete buckets (aligned to the epoch), the last one ending at or before `now`. Start times in epoch seconds. */
export function gridOf(bucketS: number, points: number, now: Date): { from: number; to: number; starts: number[] } {
  const to = Math.floor(now.getTime() / 1000 / bucketS) * bucketS;
  const from = to - points * bucketS;
  return { from, to, starts: Array.from({ length: points }, (_, i) => from + i * bucketS) };
}

const EMPTY = { changes: null, listed_changes: null, tracked_prefixes: null, flapping_prefixes: null, flapping_sessions: null, open_alerts: null };

/** Every bucket of the grid, ascending; one without an archive row is all null (a gap). */
export function seriesOf(starts: readonly number[], bucketS: number, stored: readonly StoredBucket[]): FlapStatsPoint[] {
  const byT = new Map(stored.map((b) => [b.t, b]));
  return starts.map((t) => {
    const b = byT.get(t) ?? { t, ...EMPTY };
    return { ...b, t, rate_per_s: b.changes === null ? null : b.changes / bucketS };
  });
}

/**
 * The 90th-percentile trimmed mean of the changes of the given 60 s buckets
 * (null, a missing bucket, counts 0): sorted ascending, the top 10 % dropped
 * (floor(n / 10) buckets, 1 of 15), the rest averaged, in changes per second.
 */
export function trimmedRate(changes: readonly (number | null)[], bucketS = GAUGE.bucket_s): number {
  const sorted = changes.map((c) => c ?? 0).sort((a, b) => a - b);
  const kept = sorted.slice(0, sorted.length - Math.floor((sorted.length * (100 - GAUGE.percentile)) / 100));
  if (!kept.length) return 0;
  return kept.reduce((a, b) => a + b, 0) / kept.length / bucketS;
}
