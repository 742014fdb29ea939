import { advisoryKey } from '../../db/pool.js';
import type { WriteLock } from '../types.js';

/**
 * The in-process half of the writer locks (the PostgreSQL advisory locks are
 * the other half, shared by every process on the database). A writer first
 * waits here, holding no connection, so a hundred writers queued on one stream
 * hold one pool connection between them, not a hundred.
 *
 * Read/write locks by name, granted first come first served: a shared request
 * queued behind an exclusive one waits for it (a fleet-wide write is not
 * starved by a stream of node writes).
 */
export class KeyedLocks {
  private readonly locks = new Map<string, { shared: number; exclusive: boolean; queue: { shared: boolean; grant: () => void }[] }>();

  /** Takes every lock, in the order given (callers sort them). */
  async acquire(locks: readonly WriteLock[]): Promise<void> {
    for (const lock of locks) await this.one(lock);
  }

  /** Takes every lock only when none has to wait; else takes none. */
  tryAcquire(locks: readonly WriteLock[]): boolean {
    if (!locks.every((l) => this.free(l.name, !!l.shared))) return false;
    for (const l of locks) this.grant(this.entry(l.name), !!l.shared);
    return true;
  }

  release(locks: readonly WriteLock[]): void {
    for (const lock of locks) {
      const entry = this.locks.get(lock.name);
      if (!entry) continue;
      if (lock.shared) entry.shared--;
      else entry.exclusive = false;
      while (entry.queue.length > 0 && this.compatible(entry, entry.queue[0].shared)) {
        const next = entry.queue.shift()!;
        this.grant(entry, next.shared);
        next.grant();
      }
      if (!entry.exclusive && entry.shared === 0 && entry.queue.length === 0) this.locks.delete(lock.name);
    }
  }

  private one(lock: WriteLock): Promise<void> {
    const shared = !!lock.shared;
    const entry = this.entry(lock.name);
    if (entry.queue.length === 0 && this.compatible(entry, shared)) {
      this.grant(entry, shared);
      return Promise.resolve();
    }
    return new Promise((resolve) => entry.queue.push({ shared, grant: resolve }));
  }

  private free(name: string, shared: boolean): boolean {
    const entry = this.locks.get(name);
    return !entry || (entry.queue.length === 0 && this.compatible(entry, shared));
  }

  private entry(name: string) {
    let entry = this.locks.get(name);
    if (!entry) this.locks.set(name, (entry = { shared: 0, exclusive: false, queue: [] }));
    return entry;
  }

  private compatible(entry: { shared: number; exclusive: boolean }, shared: boolean): boolean {
    return shared ? !entry.exclusive : !entry.exclusive && entry.shared === 0;
  }

  private grant(entry: { shared: number; exclusive: boolean }, shared: boolean): void {
    if (shared) entry.shared++;
    else entry.exclusive = true;
  }
}

/** At most `size` holders at a time, first come first served. */
export class Semaphore {
  private used = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly size: number) {}

  async acquire(): Promise<void> {
    if (this.used < this.size) {
      this.used++;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }

  release(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.used--;
  }
}

/** One order for every writer (in process and in PostgreSQL), so no two can wait for each other in a circle. */
export function sortLocks(locks: readonly WriteLock[]): WriteLock[] {
  const byName = new Map<string, WriteLock>();
  // The same name twice: exclusive wins.
  for (const l of locks) if (!byName.has(l.name) || !l.shared) byName.set(l.name, { name: l.name, ...(l.shared ? { shared: true } : {}) });
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** The advisory lock key of a writer lock (its own namespace: no other advisory lock of the system collides by name). */
export function writeLockKey(name: string): string {
  return advisoryKey(`dn42-write:${name}`).toString();
}
