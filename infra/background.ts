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

  private readonly stopper = new AbortController();

  /**
   * Aborted by `stop()`: work that may wait long on someone else (the first MTU
   * probe of an autopeering request waits on the agent) gives up on it, so a
   * shutdown does not wait for it.
   */
  get stopping(): AbortSignal {
    return this.stopper.signal;
  }

  /** Shutdown: tells long waits to give up (`stopping`), then drains. */
  async stop(): Promise<void> {
    this.stopper.abort();
    await this.drain();
  }

  /** Resolves once everything tracked so far (and started meanwhile) has settled. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }
}
