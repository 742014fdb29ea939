import type { Queryable } from '../db/pool.js';
import { targetVersion } from './store.js';

/** How old the kept target may get before a read starts a refresh: another instance's change shows within this. */
export const TARGET_CACHE_MAX_AGE_MS = 30_000;

/**
 * The global agent target version as this instance last knew it, for answers
 * that must not query the database (document 3: `GET /ui/session`). A target set
 * through this instance is known at once (`remember`); one set through another
 * instance arrives with the next refresh, which a read starts in the background
 * once the kept value is older than `maxAgeMs` (`TARGET_CACHE_MAX_AGE_MS`). Null until known.
 */
export class TargetVersionCache {
  private value: string | null = null;
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly db: Queryable,
    private readonly maxAgeMs = TARGET_CACHE_MAX_AGE_MS,
  ) {}

  get current(): string | null {
    return this.value;
  }

  /** Whether the kept value is old enough that a refresh should start. */
  get due(): boolean {
    return this.loading === undefined && performance.now() - this.loadedAt > this.maxAgeMs;
  }

  remember(version: string): void {
    this.value = version;
    this.loadedAt = performance.now();
  }

  /** Reads the target again (one read at a time; callers share it). */
  refresh(): Promise<void> {
    // Race: a `remember` landing while the read runs is newer than what the read
    // saw; the read then keeps the remembered value (targets never go backwards).
    const started = performance.now();
    this.loading ??= targetVersion(this.db)
      .then((version) => {
        if (this.loadedAt < started) {
          this.value = version;
          this.loadedAt = performance.now();
        }
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}

const caches = new WeakMap<object, TargetVersionCache>();

/** The cache of a database handle (the pool the process shares), so the release commands and the session read one value. */
export function targetVersionCache(db: Queryable): TargetVersionCache {
  let cache = caches.get(db);
  if (!cache) {
    cache = new TargetVersionCache(db);
    caches.set(db, cache);
  }
  return cache;
}
