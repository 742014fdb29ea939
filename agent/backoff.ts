/**
 * Exponential backoff with jitter: `initial`, doubling up to `max`, each delay
 * stretched by up to `jitter` (a fraction) but never beyond `max`. Jitter keeps a
 * fleet that lost the control server at the same moment from reconnecting in
 * lockstep. The contract's WebSocket limit is 1 s to 30 s.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly options: { initialMs: number; maxMs: number; jitter: number } = WEBSOCKET_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next attempt; each call moves one step up. */
  next(): number {
    const { initialMs, maxMs, jitter } = this.options;
    const base = Math.min(maxMs, initialMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.round(Math.min(maxMs, base * (1 + jitter * this.random())));
  }

  /** After a success: the next failure starts again at `initial`. */
  reset(): void {
    this.attempt = 0;
  }
}

/** WebSocket reconnects: 1 s up to 30 s, plus up to 25 % jitter. */
export const WEBSOCKET_BACKOFF = { initialMs: 1_000, maxMs: 30_000, jitter: 0.25 } as const;

/** `pending-approval` and failed pulls: an administrator may take minutes, so up to 60 s. */
export const REGISTER_BACKOFF = { initialMs: 1_000, maxMs: 60_000, jitter: 0.25 } as const;

/** Resolves after `ms`, or at once when `signal` aborts (resolving `false` then). */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
