import type { StoredBucket } from '../../domain/flaps/flap-stats.js';
import type { Queryable } from '../db/pool.js';

/**
 * The flap-rate archive (`flap_rate_minutes`, migration 0008): per minute of the
 * server clock the changes the prefix flap reports of that minute counted, and
 * the alert job's sample of the point-in-time flap counts.
 */

const MINUTE_MS = 60_000;
export const minuteOf = (at: Date): Date => new Date(Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS);

/**
 * The upsert adding one report's changes to the minute it was received in, as
 * SQL with the placeholders given: whether it counts (boolean), the minute, the
 * changes and the listed changes. `replacePrefixFlaps` and `replaceOverKnown` write it with the report.
 */
export const FLAP_RATE_UPSERT = (counts: string, minute: string, changes: string, listed: string): string =>
  `INSERT INTO flap_rate_minutes (minute, reports, changes, listed_changes) SELECT ${minute}::timestamptz, 1, ${changes}::bigint, ${listed}::bigint WHERE ${counts}::boolean
     ON CONFLICT (minute) DO UPDATE SET reports = flap_rate_minutes.reports + 1,
       changes = COALESCE(flap_rate_minutes.changes, 0) + EXCLUDED.changes,
       listed_changes = COALESCE(flap_rate_minutes.listed_changes, 0) + EXCLUDED.listed_changes`;

export interface FlapSample {
  tracked_prefixes: number;
  flapping_prefixes: number;
  flapping_sessions: number;
  open_alerts: number;
}

/** The point-in-time counts of the minute of `at` (a second sample in the same minute replaces the first). */
export async function sampleFlapRate(db: Queryable, at: Date, s: FlapSample): Promise<void> {
  await db.query(
    `INSERT INTO flap_rate_minutes (minute, tracked_prefixes, flapping_prefixes, flapping_sessions, open_alerts) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (minute) DO UPDATE SET tracked_prefixes = EXCLUDED.tracked_prefixes, flapping_prefixes = EXCLUDED.flapping_prefixes,
       flapping_sessions = EXCLUDED.flapping_sessions, open_alerts = EXCLUDED.open_alerts`,
    [minuteOf(at), s.tracked_prefixes, s.flapping_prefixes, s.flapping_sessions, s.open_alerts],
  );
}

/** The archive between `from` and `to` in buckets of `bucketS`: changes summed (null when no minute of a bucket had a report), point-in-time counts the highest sample (null: none). */
export async function flapRateBuckets(db: Queryable, from: Date, to: Date, bucketS: number): Promise<StoredBucket[]> {
  const { rows } = await db.query(
    `SELECT floor(extract(epoch FROM minute) / $3)::bigint * $3 AS t,
            sum(changes)::bigint AS changes, sum(listed_changes)::bigint AS listed_changes,
            max(tracked_prefixes) AS tracked_prefixes, max(flapping_prefixes) AS flapping_prefixes,
            max(flapping_sessions) AS flapping_sessions, max(open_alerts) AS open_alerts
     FROM flap_rate_minutes WHERE minute >= $1 AND minute < $2 GROUP BY 1 ORDER BY 1`,
    [from, to, bucketS],
  );
  const num = (v: string | number | null) => (v === null ? null : Number(v));
  return rows.map((r) => ({
    t: Number(r.t),
    changes: num(r.changes),
    listed_changes: num(r.listed_changes),
    tracked_prefixes: r.tracked_prefixes,
    flapping_prefixes: r.flapping_prefixes,
    flapping_sessions: r.flapping_sessions,
    open_alerts: r.open_alerts,
  }));
}

/** Pruned by the telemetry retention job (60 days, document 3 Limits). */
export const FLAP_RATE_RETAINED_TABLES: readonly { table: string; column: string }[] = [{ table: 'flap_rate_minutes', column: 'minute' }];
