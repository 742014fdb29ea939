/**
 * Work a request starts but does not wait for (audit writes after the response,
 * archives after a report). Shutdown drains it before the database goes away, so
 * a SIGTERM does not lose what was already answered.
 */
export class BackgroundTasks {
  private readonly pending = new Set<Promise<unknown>>();

  /** Tracks `work` until it settles; its failure is the caller's to handle. */
  run<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    const forget = () => this.pending.delete(work);
    work.then(forget, forget);
    return work;
  }

  get size(): number {
    return this.pending.size;
  }

  /** Resolves once everything tracked so far (and started meanwhile) has settled. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
