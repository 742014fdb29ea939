import { fileURLToPath } from 'node:url';
import type { MigrationSet } from './db/migrate.js';
import type { Queryable } from './db/pool.js';

/** The `rate_limit_hits` table (applied with the other state migrations). */
export const rateLimitMigrations: MigrationSet = { name: 'rate-limit', dir: fileURLToPath(new URL('./rate-limit-migrations', import.meta.url)) };

/**
 * A sliding-window counter kept in PostgreSQL, so that every instance agrees.
 * Keys live in a named pool (`pool`), so e.g. captcha failures and passkey-login
 * attempts of one IP never share a count.
 */
export interface RateLimit {
  /** True when `key` already has `limit` or more hits in the window ending at `now`. */
  exceeded(key: string, now: Date): Promise<boolean>;
  /** Records one hit for `key` at `now`. */
  record(key: string, now: Date): Promise<void>;
  /** Records one hit and answers whether the key is still within the limit (hits ≤ limit). */
  take(key: string, now: Date): Promise<boolean>;
  /**
   * Records one hit only while the key is below the limit, atomically; false
   * (nothing recorded) when it is not. A place for an attempt whose outcome is
   * not known yet: `release` it if the attempt turns out not to count.
   */
  reserve(key: string, now: Date): Promise<boolean>;
  /** Removes one hit recorded at exactly `at` (a reservation that did not count). */
  release(key: string, at: Date): Promise<void>;
}

const COUNT = `SELECT coalesce((SELECT count(*) FROM unnest(hits) AS h WHERE h > $3 AND h <= $4), 0)::int AS hits
  FROM rate_limit_hits WHERE pool = $1 AND key = $2`;

// Race: two instances taking for one key at once must not both read the old count.
// The upsert takes the row lock, and the loser of the race re-evaluates its update
// against the winner's committed row, so every hit is counted exactly once.
// Only the newest limit + 1 hits are kept: enough to tell "over the limit" apart.
const HIT = `INSERT INTO rate_limit_hits AS r (pool, key, hits) VALUES ($1, $2, ARRAY[$4::timestamptz])
  ON CONFLICT (pool, key) DO UPDATE SET hits = (
    SELECT coalesce(array_agg(h ORDER BY h), '{}') FROM (
      SELECT h FROM unnest(r.hits || $4::timestamptz) AS h WHERE h > $3 ORDER BY h DESC LIMIT $5
    ) newest)
  RETURNING (SELECT count(*) FROM unnest(r.hits) AS h WHERE h > $3 AND h <= $4)::int AS hits`;

/** Rows whose newest hit is older than this are pruned; no pool may have a longer window. */
export const RATE_LIMIT_RETENTION_SECONDS = 86_400;

/** Deletes the rows of keys that have not been hit for a day (they count nothing any more); returns how many. */
export async function pruneRateLimits(db: Queryable, now: Date): Promise<number> {
  const cutoff = new Date(now.getTime() - RATE_LIMIT_RETENTION_SECONDS * 1000);
  const result = await db.query(
    `DELETE FROM rate_limit_hits WHERE (SELECT max(h) FROM unnest(hits) AS h) IS NULL OR (SELECT max(h) FROM unnest(hits) AS h) < $1`,
    [cutoff],
  );
  return result.rowCount ?? 0;
}

// The row exists first (ENSURE); the UPDATE's condition is re-checked against
// the newest row version after waiting for its lock, so concurrent reservations
// never exceed the limit.
const ENSURE = `INSERT INTO rate_limit_hits (pool, key, hits) VALUES ($1, $2, '{}') ON CONFLICT DO NOTHING`;
const RESERVE = `UPDATE rate_limit_hits AS r SET hits = (
    SELECT coalesce(array_agg(h ORDER BY h), '{}') FROM (
      SELECT h FROM unnest(r.hits || $4::timestamptz) AS h WHERE h > $3 ORDER BY h DESC LIMIT $5
    ) newest)
  WHERE pool = $1 AND key = $2 AND (SELECT count(*) FROM unnest(r.hits) AS h WHERE h > $3 AND h <= $4) < $6`;

const RELEASE = `UPDATE rate_limit_hits SET hits = (
    SELECT coalesce(array_agg(h ORDER BY h), '{}') FROM (
      SELECT h, row_number() OVER (PARTITION BY h = $3::timestamptz) AS n FROM unnest(hits) AS h
    ) t WHERE NOT (h = $3::timestamptz AND n = 1))
  WHERE pool = $1 AND key = $2`;

export function rateLimit(db: Queryable, options: { pool: string; limit: number; windowSeconds: number }): RateLimit {
  const { pool, limit, windowSeconds } = options;
  if (windowSeconds > RATE_LIMIT_RETENTION_SECONDS)
    throw new Error(`rate limit ${pool}: a window of ${windowSeconds} s is longer than the ${RATE_LIMIT_RETENTION_SECONDS} s rows are kept`);
  const windowStart = (now: Date) => new Date(now.getTime() - windowSeconds * 1000);

  async function hitsIn(key: string, now: Date): Promise<number> {
    const { rows } = await db.query(COUNT, [pool, key, windowStart(now), now]);
    return (rows[0]?.hits as number | undefined) ?? 0;
  }

  /** Records a hit and answers how many hits the window ending at `now` holds with it. */
  async function hit(key: string, now: Date): Promise<number> {
    const { rows } = await db.query(HIT, [pool, key, windowStart(now), now, limit + 1]);
    return rows[0].hits as number;
  }

  return {
    async exceeded(key, now) {
      return (await hitsIn(key, now)) >= limit;
    },
    async record(key, now) {
      await hit(key, now);
    },
    async take(key, now) {
      return (await hit(key, now)) <= limit;
    },
    async reserve(key, now) {
      await db.query(ENSURE, [pool, key]);
      const result = await db.query(RESERVE, [pool, key, windowStart(now), now, limit + 1, limit]);
      return result.rowCount === 1;
    },
    async release(key, at) {
      await db.query(RELEASE, [pool, key, at]);
    },
  };
}
