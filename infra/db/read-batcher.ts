/**
 * Reads of one kind by key, batched while one is in flight: a read asked for
 * when none runs starts at once (no added latency when idle); those asked for
 * while one runs wait for it and go together in the next one (one statement
 * for many requests under load). A read always starts after it was asked for,
 * so it sees every write committed before. A failed read fails every key it carried.
 */
export class ReadBatcher<K, V> {
  private queue: { key: K; resolve: (v: V | undefined) => void; reject: (err: unknown) => void }[] = [];
  private running = false;

  constructor(
    private readonly load: (keys: K[]) => Promise<Map<K, V>>,
    private readonly maxKeys = 500,
  ) {}

  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ key, resolve, reject });
      if (!this.running) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxKeys);
        try {
          const found = await this.load([...new Set(batch.map((b) => b.key))]);
          for (const b of batch) b.resolve(found.get(b.key));
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }
}
