// STUB — owned by the identity-verification helper, who replaces the bodies. Signatures are the agreed interface.
import type { Queryable } from './db/pool.js';

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
}

export function rateLimit(_db: Queryable, _options: { pool: string; limit: number; windowSeconds: number }): RateLimit {
  throw new Error('rateLimit: not implemented yet');
}
