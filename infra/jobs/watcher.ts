import type pg from 'pg';
import { PgListener } from '../db/listener.js';
import type { Logger } from '../logger.js';
import { sleep } from '../timing.js';
import { JOBS_CHANNEL } from './store.js';

/** How long a new watch waits for LISTEN before it starts anyway (polling covers the gap). */
const LISTEN_WAIT_MS = 2_000;

/**
 * Wakes this instance's job streams when any instance buffers a message
 * (`NOTIFY dn42_ui_jobs, '<job id>'`). The LISTEN connection is open only while
 * someone here watches a job, so an instance without browsers holds none.
 * Notifications are hints: a stream re-reads its rows on every wake and also
 * polls, so a notification lost while (re)connecting costs latency only.
 */
export class JobWatcher {
  private listener: PgListener | undefined;
  private ready: Promise<void> = Promise.resolve();
  private readonly watches = new Map<string, Set<() => void>>();

  constructor(
    private readonly connectionString: string,
    private readonly log: Logger,
  ) {}

  /** Calls `wake` on every message of the job until the returned function is called. Resolves once LISTEN is active (or after a short wait). */
  async watch(jobId: string, wake: () => void): Promise<() => void> {
    let set = this.watches.get(jobId);
    if (!set) this.watches.set(jobId, (set = new Set()));
    set.add(wake);
    if (!this.listener) this.open();
    await Promise.race([this.ready, sleep(LISTEN_WAIT_MS)]);
    return () => this.unwatch(jobId, wake);
  }

  private open(): void {
    const listener = new PgListener(this.connectionString, this.log);
    listener.on('notification', (channel: string, payload: string) => {
      if (channel !== JOBS_CHANNEL) return;
      for (const wake of this.watches.get(payload) ?? []) wake();
    });
    // After a gap every stream re-reads: it may have missed announcements.
    listener.on('reconnected', () => {
      for (const set of this.watches.values()) for (const wake of set) wake();
    });
    this.listener = listener;
    this.ready = listener.listen(JOBS_CHANNEL).catch((err) => this.log.warn({ err }, 'job LISTEN failed; streams poll'));
  }

  private unwatch(jobId: string, wake: () => void): void {
    const set = this.watches.get(jobId);
    if (!set?.delete(wake)) return;
    if (set.size === 0) this.watches.delete(jobId);
    if (this.watches.size === 0 && this.listener) {
      const listener = this.listener;
      this.listener = undefined;
      void listener.close();
    }
  }
}

const watchers = new WeakMap<pg.Pool, JobWatcher>();

/** The process's watcher for the database behind `pool`. */
export function jobWatcher(pool: pg.Pool, log: Logger): JobWatcher {
  let watcher = watchers.get(pool);
  if (!watcher) {
    const url = pool.options.connectionString;
    if (!url) throw new Error('job streams need a pool built from a connection string');
    watchers.set(pool, (watcher = new JobWatcher(url, log)));
  }
  return watcher;
}
