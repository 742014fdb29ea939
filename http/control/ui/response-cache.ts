/**
 * A short-lived cache of whole answers by key (the full URL): callers within
 * `ttlMs` of the first get the same answer, `generated_at` included, and callers
 * while it is being built share the one build. Time is the service clock, so
 * specs move it. Per process: two instances may each build once per window.
 * At most `maxEntries` answers are kept: a burst of distinct URLs beyond it is
 * answered uncached rather than held in memory.
 */
export class ResponseCache<T> {
  private readonly entries = new Map<string, { expires: number; value: Promise<T> }>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => Date,
    private readonly maxEntries = 256,
  ) {}

  get(key: string, build: () => Promise<T>): Promise<T> {
    const t = this.now().getTime();
    for (const [k, e] of this.entries) if (e.expires <= t) this.entries.delete(k);
    const hit = this.entries.get(key);
    if (hit) return hit.value;
    const value = build();
    if (this.entries.size >= this.maxEntries) return value;
    this.entries.set(key, { expires: t + this.ttlMs, value });
    // A failed build is not kept: the next caller tries again.
    value.catch(() => this.entries.delete(key));
    return value;
  }
}
