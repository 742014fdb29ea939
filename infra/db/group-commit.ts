/** Items of one write at most (one statement's array parameters). */
export const MAX_GROUP = 500;

interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit: the items added while the event loop handles one round of I/O
 * (the requests whose bytes arrived together) are written by one call of
 * `write`, one statement for all, at `setImmediate`. Each `add` settles once the
 * write holding its item has committed, so a request is answered only when its
 * row is stored. A write that fails is tried again item by item, so an error
 * reaches the request whose item caused it, and only that one. Two items with the
 * same `key` never share a write: the later one goes in a later write (a statement's
 * upsert cannot touch one row twice; the rows' own conditions order them).
 */
export class GroupCommit<T> {
  private pending: Waiting<T>[] = [];
  private scheduled = false;
  /** Keys of the items whose write has not settled yet: a later item of one waits for it. */
  private readonly writing = new Set<string>();

  constructor(
    private readonly write: (items: readonly T[]) => Promise<void>,
    private readonly key: (item: T) => string,
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const group: Waiting<T>[] = [];
    const later: Waiting<T>[] = [];
    const keys = new Set<string>();
    for (const w of this.pending) {
      const key = this.key(w.item);
      if (group.length >= MAX_GROUP || keys.has(key) || this.writing.has(key)) later.push(w);
      else {
        keys.add(key);
        group.push(w);
      }
    }
    this.pending = later;
    // Every item waits for a write still running: that write schedules the next flush when it settles.
    if (group.length === 0) return;
    for (const key of keys) this.writing.add(key);
    if (later.length > 0 && group.length >= MAX_GROUP) this.schedule();
    try {
      await this.write(group.map((w) => w.item));
      for (const w of group) w.resolve();
    } catch (err) {
      if (group.length === 1) group[0].reject(err);
      else await Promise.all(group.map((w) => this.write([w.item]).then(w.resolve, w.reject)));
    } finally {
      for (const key of keys) this.writing.delete(key);
    }
    // A key's later items wait for its earlier one's write.
    if (this.pending.length > 0) this.schedule();
  }
}
