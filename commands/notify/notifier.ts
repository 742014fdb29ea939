import type pg from 'pg';
import type { Config } from '../../infra/config.js';
import type { EventStore } from '../../infra/eventstore/types.js';
import type { Logger } from '../../infra/logger.js';
import { mailSender } from '../../infra/mail.js';
import { failureBackoffMs, wakeableSleep } from '../../infra/timing.js';
import { deliverDue, newInstanceName, type DeliveryDeps } from './deliver.js';
import { initCursor, subscriberBatch, type Localize, type SubscriberDeps } from './subscriber.js';

export interface NotifierDeps extends DeliveryDeps, SubscriberDeps {
  log: Logger;
  pollMs: number;
}

export interface Notifier {
  stop(): Promise<void>;
}

/**
 * The notification pipeline of one instance (issue 32): the signal subscriber
 * (events → outbox) and the deliverer (outbox → channels), each a loop woken
 * by appends and by its own work, polling every `pollMs` as the guarantee. Any
 * number of instances may run it: the subscriber's cursor and the outbox rows
 * are claimed with SKIP LOCKED. A database outage is logged and retried with
 * backoff; nothing is lost, since every step is a transaction.
 */
export function startNotifier(deps: NotifierDeps): Notifier {
  let stopping = false;
  const sleeps = new Set<() => void>();
  const nap = async (ms: number) => {
    const s = wakeableSleep(ms);
    sleeps.add(s.wake);
    await s.done;
    sleeps.delete(s.wake);
  };
  let deliveryWake: (() => void) | undefined;
  let subscriberWake: (() => void) | undefined;
  const unwatch = deps.store.watch(() => subscriberWake?.());

  const loop = async (name: string, round: () => Promise<boolean>, wakeSlot: (w: (() => void) | undefined) => void) => {
    let failures = 0;
    while (!stopping) {
      let busy: boolean;
      try {
        busy = await round();
        failures = 0;
      } catch (err) {
        failures++;
        if (failures === 1 || failures % 20 === 0) deps.log.error({ err, loop: name, failures }, 'notification loop failed; retrying');
        await nap(failureBackoffMs(failures));
        continue;
      }
      if (busy || stopping) continue;
      const s = wakeableSleep(deps.pollMs);
      wakeSlot(s.wake);
      sleeps.add(s.wake);
      await s.done;
      sleeps.delete(s.wake);
      wakeSlot(undefined);
    }
  };

  const subscriber = (async () => {
    await loop(
      'subscriber',
      async () => {
        await initCursor(deps);
        const read = await subscriberBatch(deps);
        if (read) deliveryWake?.();
        return read !== null && read > 0;
      },
      (w) => (subscriberWake = w),
    );
  })();
  const deliverer = loop(
    'deliverer',
    async () => (await deliverDue(deps)) > 0,
    (w) => (deliveryWake = w),
  );

  return {
    async stop() {
      stopping = true;
      unwatch();
      for (const wake of sleeps) wake();
      await Promise.all([subscriber, deliverer]);
    },
  };
}

/** The notifier's dependencies from the configuration (`NOTIFY_*`, `SMTP_URL`) and a system's parts. */
export function notifierDeps(parts: { config: Config; pool: pg.Pool; store: EventStore; log: Logger; now: () => Date; localize?: Localize }): NotifierDeps {
  const { config } = parts;
  return {
    pool: parts.pool,
    store: parts.store,
    log: parts.log,
    now: parts.now,
    localize: parts.localize,
    mail: mailSender(config),
    webhook: { allow: config.notifyWebhookAllow, timeoutMs: config.notifyTimeoutMs, maxResponseBytes: 64 * 1024 },
    retryBaseMs: config.notifyRetryBaseMs,
    pauseAfter: config.notifyPauseAfter,
    leaseMs: config.notifyLeaseMs,
    instance: newInstanceName(),
    fanout: { floodLimit: config.notifyFloodLimit },
    pollMs: config.notifyPollMs,
  };
}
