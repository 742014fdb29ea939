/**
 * Prefix flap scores (document 3, "Flap scores"): an exponentially decayed
 * count of route changes per (prefix, peer AS), half-life 10 minutes, with the
 * list line (`flapping`) at 20 and the alert lines at 100 (open) and 50 (close).
 * Agents send the score decayed to their `captured_at`; views decay it on to
 * the time of the answer. Pure.
 */
export const PREFIX_HALF_LIFE_S = 600;
export const PREFIX_LIST_LINE = 20;
export const PREFIX_ALERT_OPEN = 100;
export const PREFIX_ALERT_CLOSE = 50;
/** `flapping_since` is shown only once the alert strength has lasted this long ("about 60 s of crossing the line"). */
export const FLAPPING_SINCE_MIN_S = 60;

/** `score · 2^(−Δt / half-life)` from `at` to `now` (epoch ms); a clock behind `at` does not grow a score. */
export function decayTo(score: number, at: number, now: number, halfLifeS = PREFIX_HALF_LIFE_S): number {
  return score * Math.pow(2, -Math.max(0, now - at) / 1000 / halfLifeS);
}

/** A stored prefix row's score (as its agent sent it at `captured_at`) decayed on to `now` (epoch ms). */
export function rowScoreAt(row: { score: number; captured_at: string }, now: number): number {
  return decayTo(row.score, Date.parse(row.captured_at), now);
}
