/**
 * Where a sample goes in time: at the agent's `captured_at` (an agent that was cut
 * off sends late, and its samples belong where they were measured), bounded by the
 * server's clock. A time ahead of the server is clamped to the server's now (a
 * series never holds the future; within the skew it is clock noise, beyond it the
 * arrival is the best time known). A time older than the retention is dropped from
 * the series: the retention job would delete it at its next run.
 */

/** How long samples, reports and status events are kept. */
export const SAMPLE_RETENTION_DAYS = 60;
const RETENTION_MS = SAMPLE_RETENTION_DAYS * 86_400_000;

/** Agent clocks ahead of the server by up to this much are taken as noise (logged beyond it by the caller). */
export const CLOCK_SKEW_MS = 120_000;

export type Placement = { at: Date; clamped: 'none' | 'skew' | 'ahead' } | { at: null; clamped: 'expired' };

/**
 * Epoch milliseconds of an RFC 3339 time. A leap second (`23:59:60`, which the
 * date-time format accepts and `Date.parse` does not) is the next minute's start,
 * as PostgreSQL reads it.
 */
export function parseInstant(time: string): number {
  const t = Date.parse(time);
  if (!Number.isNaN(t)) return t;
  return Date.parse(time.replace(/(T\d{2}:\d{2}):60/i, '$1:59')) + 1000;
}

export function placeSample(capturedAt: string, now: Date): Placement {
  const t = parseInstant(capturedAt);
  if (Number.isNaN(t)) return { at: now, clamped: 'ahead' };
  const ahead = t - now.getTime();
  if (ahead > CLOCK_SKEW_MS) return { at: now, clamped: 'ahead' };
  if (ahead > 0) return { at: now, clamped: 'skew' };
  if (-ahead > RETENTION_MS) return { at: null, clamped: 'expired' };
  return { at: new Date(t), clamped: 'none' };
}
