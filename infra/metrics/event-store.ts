import { performance } from 'node:perf_hooks';
import { Histogram, type Registry } from 'prom-client';
import { WrongExpectedVersion, type EventStore, type WriteSession } from '../eventstore/types.js';

type Outcome = 'ok' | 'conflict' | 'error';

/** `dn42_eventstore_append_duration_seconds{outcome}`: every append, in its own statement or inside a writer-lock transaction. */
export class AppendMetrics {
  private readonly seconds: Histogram<'outcome'>;

  constructor(registry: Registry) {
    this.seconds = new Histogram({
      name: 'dn42_eventstore_append_duration_seconds',
      help: 'event store append latency (the append call: checks, inserts, inline projections); outcome ok, conflict (wrong expected version) or error',
      labelNames: ['outcome'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    // Present from the start, so a rate() over them does not begin with a missing series.
    for (const outcome of ['ok', 'conflict', 'error'] as const) this.seconds.zero({ outcome });
  }

  async timed<T>(append: () => Promise<T>): Promise<T> {
    const start = performance.now();
    let outcome: Outcome = 'error';
    try {
      const result = await append();
      outcome = 'ok';
      return result;
    } catch (err) {
      if (err instanceof WrongExpectedVersion) outcome = 'conflict';
      throw err;
    } finally {
      this.seconds.observe({ outcome }, (performance.now() - start) / 1000);
    }
  }

  /**
   * The store as the services see it: the same object (a Proxy, so its class and
   * every other member are untouched) whose `append`, and the `append` of each
   * `withWriteLocks` session, are timed.
   */
  measure<S extends EventStore>(store: S): S {
    return new Proxy(store, {
      get: (target, property) => {
        const value: unknown = Reflect.get(target, property, target);
        if (property === 'append') return (...args: Parameters<EventStore['append']>) => this.timed(() => target.append(...args));
        if (property === 'withWriteLocks' && typeof value === 'function') {
          return <T>(locks: Parameters<NonNullable<EventStore['withWriteLocks']>>[0], work: (session: WriteSession) => Promise<T>) =>
            target.withWriteLocks!(locks, (session) => work({ ...session, append: (...args) => this.timed(() => session.append(...args)) }));
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
}
