import type pg from 'pg';
import type { RoaSet } from '../../domain/rpki/roa.js';
import type { Logger } from '../logger.js';
import { RegistryUnavailable, type RegistryClient } from './client.js';
import { roaSet, roaSetHead } from './queries.js';

/** One ROA set and its entity tag, as the control server hands it to agents. */
export interface TaggedRoaSet {
  etag: string;
  set: RoaSet;
}

/**
 * Where the control server gets the ROA set: the replica in the same process
 * (its tables, through the shared pool) or a replica over HTTP (`REGISTRY_URL`).
 * `current()` answers the set, or null while the replica has none (never synced);
 * it throws `RegistryUnavailable` only when the replica cannot be reached and no
 * set was ever read from it.
 */
export interface RoaSource {
  readonly kind: 'local' | 'http';
  current(): Promise<TaggedRoaSet | null>;
}

/** The replica's tables in this process's database: one row read per call, the ROAs again only when their tag changed. */
export function localRoaSource(pool: pg.Pool): RoaSource {
  let cached: TaggedRoaSet | null = null;
  return {
    kind: 'local',
    async current() {
      const head = await roaSetHead(pool);
      if (!head) return null;
      if (cached?.etag === head.etag && cached.set.commit === head.commit) return cached;
      const loaded = await roaSet(pool);
      if (!loaded) return null;
      cached = { etag: loaded.head.etag, set: { commit: loaded.head.commit, synced_at: loaded.head.synced_at, roas: loaded.roas } };
      return cached;
    },
  };
}

/**
 * A replica over HTTP. The last set is kept and revalidated (`If-None-Match`)
 * at most every `revalidateMs`, so agents polling the control server cost the
 * replica one conditional request per interval, not one per agent. When the
 * replica cannot be reached the last set keeps being served: a stale ROA set
 * is closer to the truth than none, which would let every invalid route in.
 */
export function httpRoaSource(client: RegistryClient, log: Logger, options: { revalidateMs?: number; now?: () => number } = {}): RoaSource {
  const revalidateMs = options.revalidateMs ?? 30_000;
  const now = options.now ?? Date.now;
  let cached: TaggedRoaSet | null = null;
  let checkedAt = -Infinity;
  let inFlight: Promise<TaggedRoaSet | null> | null = null;

  const revalidate = async (): Promise<TaggedRoaSet | null> => {
    try {
      const answer = await client.roaSet(cached?.etag);
      checkedAt = now();
      if (answer === 'not_modified') return cached;
      // A replica that lost its set (a fresh database) is not believed over the set it served before.
      if (answer === null) return cached;
      cached = answer;
      return cached;
    } catch (err) {
      if (!(err instanceof RegistryUnavailable) || !cached) throw err;
      checkedAt = now();
      log.warn({ commit: cached.set.commit }, 'registry replica unavailable: serving the last ROA set');
      return cached;
    }
  };

  return {
    kind: 'http',
    async current() {
      if (cached && now() - checkedAt < revalidateMs) return cached;
      inFlight ??= revalidate().finally(() => (inFlight = null));
      return inFlight;
    },
  };
}
