import DataLoader from 'dataloader';

/** Keys of one batch at most (one query's array parameter). */
export const MAX_BATCH = 500;

/**
 * One read for many concurrent requests: every `load` made while the event
 * loop handles one round of I/O (the HTTP requests whose bytes arrived
 * together) goes into one call of `read`, run at `setImmediate`. Nothing is
 * cached: each call reads what is committed when its batch runs, as a query of
 * its own would. Under load the batches grow by themselves (a fan-out's pulls
 * arrive together); alone, a request waits for the end of its loop turn only.
 */
export function batchedReads<K, V>(read: (keys: readonly K[]) => Promise<V[]>): (key: K) => Promise<V> {
  const loader = new DataLoader<K, V>((keys) => read(keys), {
    cache: false,
    maxBatchSize: MAX_BATCH,
    batchScheduleFn: (run) => setImmediate(run),
  });
  return (key) => loader.load(key);
}

/** One batched reader per owner (a pool): made on first use, dropped with the owner. */
export function perOwner<O extends object, K, V>(make: (owner: O) => (key: K) => Promise<V>): (owner: O) => (key: K) => Promise<V> {
  const made = new WeakMap<O, (key: K) => Promise<V>>();
  return (owner) => {
    let reader = made.get(owner);
    if (!reader) made.set(owner, (reader = make(owner)));
    return reader;
  };
}
