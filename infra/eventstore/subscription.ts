import type { Logger } from '../logger.js';
import { failureBackoffMs, wakeableSleep } from '../timing.js';
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

  const idle = async (ms: number) => {
    if (pending || stopped) return;
    const wait = wakeableSleep(ms);
    wakeUp = wait.wake;
    await wait.done;
    wakeUp = undefined;
  };

  // Race: stop() during this pause waited it out (up to 30 s, its timer holding
  // the process open); stop() now cuts it short.
  let cutBackoff: (() => void) | undefined;
  const backoff = async (ms: number) => {
    const wait = wakeableSleep(ms);
    cutBackoff = wait.wake;
    await wait.done;
    cutBackoff = undefined;
  };

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
        await backoff(failureBackoffMs(failures));
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
