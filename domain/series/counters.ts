import { ROLLUP_WIDTHS } from './grid.js';

/**
 * Rates from cumulative byte counters (WireGuard interfaces in runtime snapshots).
 * Between two snapshots of a node, each interface counted `delta` bytes; the
 * interval's bytes and seconds are spread over the rollup buckets it overlaps, in
 * proportion to the overlap, so a bucket's rate is its bytes over its measured
 * seconds, and a bucket nobody measured stays empty (null on the grid, not 0).
 */

/** An interval longer than this is not measured: the agent was away, and bytes over it would be an average, not a rate. */
export const MAX_INTERVAL_SECONDS = 600;

export interface CounterReading {
  interface: string;
  rx_bytes: number;
  tx_bytes: number;
}

/**
 * Bytes counted between two readings of one cumulative counter. A counter that
 * went down was reset (the interface restarted) and holds what was counted since
 * the restart, which is at most one interval's worth: never negative, never a spike.
 */
export function counterDelta(previous: number, current: number): number {
  return current >= previous ? current - previous : current;
}

export interface BucketShare {
  width: number;
  /** Bucket start, epoch seconds. */
  bucket: number;
  /** Seconds of the interval inside the bucket. */
  seconds: number;
}

/** How an interval [fromMs, toMs) falls into the buckets of every rollup width. */
export function bucketShares(fromMs: number, toMs: number, widths: readonly number[] = ROLLUP_WIDTHS): BucketShare[] {
  const shares: BucketShare[] = [];
  for (const width of widths) {
    const w = width * 1000;
    for (let b = Math.floor(fromMs / w) * w; b < toMs; b += w) {
      const seconds = (Math.min(toMs, b + w) - Math.max(fromMs, b)) / 1000;
      if (seconds > 0) shares.push({ width, bucket: b / 1000, seconds });
    }
  }
  return shares;
}

export interface TrafficContribution extends BucketShare {
  /** Null: the node's sum over its interfaces. */
  interface: string | null;
  rx_bytes: number;
  tx_bytes: number;
}

/**
 * What one snapshot adds to the rollups. `previous` are the counters of the
 * node's previous snapshot at `previousAt` (epoch ms; null when there is none).
 * Nothing is added when the interval is missing, not positive or too long; an
 * interface that was not in the previous snapshot starts its counters now.
 */
export function trafficContributions(
  previousAt: number | null,
  previous: ReadonlyMap<string, CounterReading>,
  current: readonly CounterReading[],
  at: number,
): TrafficContribution[] {
  if (previousAt === null || at <= previousAt || at - previousAt > MAX_INTERVAL_SECONDS * 1000) return [];
  const interval = (at - previousAt) / 1000;
  const shares = bucketShares(previousAt, at);
  const out: TrafficContribution[] = [];
  let rx = 0;
  let tx = 0;
  for (const reading of current) {
    const before = previous.get(reading.interface);
    if (!before) continue;
    const d = { rx: counterDelta(before.rx_bytes, reading.rx_bytes), tx: counterDelta(before.tx_bytes, reading.tx_bytes) };
    rx += d.rx;
    tx += d.tx;
    for (const s of shares) out.push({ ...s, interface: reading.interface, rx_bytes: (d.rx * s.seconds) / interval, tx_bytes: (d.tx * s.seconds) / interval });
  }
  for (const s of shares) out.push({ ...s, interface: null, rx_bytes: (rx * s.seconds) / interval, tx_bytes: (tx * s.seconds) / interval });
  return out;
}

/** A bucket's rate in bytes per second; null when nothing measured it. */
export const ratePerSecond = (bytes: number, seconds: number): number | null => (seconds > 0 ? bytes / seconds : null);
