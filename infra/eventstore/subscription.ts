import type { Logger } from '../logger.js';
import { START, type EventStore, type GlobalPosition, type RecordedEvent, type SubscribeOptions, type Subscription } from './types.js';

export interface PollingSubscriptionOptions {
  read(from: GlobalPosition, limit: number): Promise<RecordedEvent[]>;
  handler(event: RecordedEvent): Promise<void> | void;
  from?: GlobalPosition;
  batchSize: number;
  pollIntervalMs: number;
  /** Registers a wake-up callback (NOTIFY); returns its removal. */
  wake?: (notify: () => void) => () => void;
  onError(err: unknown): void;
}

/**
 * Catch-up then live, on any store whose `read` returns committed events in order:
 * read a batch, hand each event to the handler, advance; when a batch comes back
 * short, wait for a wake-up or the poll interval. A failing read or handler is
 * retried from the last finished event with backoff, so nothing is skipped.
 */
export function pollingSubscription(options: PollingSubscriptionOptions): Subscription {
  let position = options.from ?? START;
  let stopped = false;
  let wakeUp: (() => void) | undefined;
  let pending = false;
  const notify = () => {
    pending = true;
    wakeUp?.();
  };
  const unregister = options.wake?.(notify);

  const idle = (ms: number) =>
    new Promise<void>((res) => {
      if (pending || stopped) return res();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wakeUp = undefined;
        res();
      }
      wakeUp = done;
    });

  // Race: stop() during this pause waited it out (up to 30 s, its timer holding
  // the process open); stop() now cuts it short.
  let cutBackoff: (() => void) | undefined;
  const backoff = (ms: number) =>
    new Promise<void>((res) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        cutBackoff = undefined;
        res();
      }
      cutBackoff = done;
    });

  const loop = (async () => {
    let failures = 0;
    while (!stopped) {
      try {
        pending = false;
        const batch = await options.read(position, options.batchSize);
        for (const event of batch) {
          if (stopped) return;
          await options.handler(event);
          position = event.position;
        }
        failures = 0;
        if (batch.length < options.batchSize) await idle(options.pollIntervalMs);
      } catch (err) {
        if (stopped) return;
        failures += 1;
        options.onError(err);
        await backoff(Math.min(30_000, 100 * 2 ** Math.min(failures, 8)));
      }
    }
  })();

  return {
    get position() {
      return position;
    },
    async stop() {
      stopped = true;
      unregister?.();
      wakeUp?.();
      cutBackoff?.();
      await loop;
    },
  };
}

/** `subscribeAll` for a store whose `readAll` is ordered and committed-only, woken by its `watch`. */
export function subscribeByPolling(
  store: Pick<EventStore, 'readAll' | 'watch'>,
  handler: (event: RecordedEvent) => Promise<void> | void,
  options: SubscribeOptions,
  pollIntervalMs: number,
  log: Logger,
): Subscription {
  return pollingSubscription({
    read: (from, limit) => store.readAll(from, limit),
    handler,
    from: options.from ?? START,
    batchSize: options.batchSize ?? 500,
    pollIntervalMs,
    wake: (notify) => store.watch(notify),
    onError: options.onError ?? ((err) => log.error({ err }, 'subscription failed; retrying')),
  });
}
