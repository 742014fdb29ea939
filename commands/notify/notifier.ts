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
  const nap = async (ms: number, bell?: Bell) => {
    const s = wakeableSleep(ms);
    sleeps.add(s.wake);
    if (bell) bell.ring = s.wake;
    await s.done;
    sleeps.delete(s.wake);
    if (bell) bell.ring = undefined;
  };
  const subscriberBell: Bell = { rung: false };
  const deliveryBell: Bell = { rung: false };
  const unwatch = deps.store.watch(() => wake(subscriberBell));

  const loop = async (name: string, round: () => Promise<boolean>, bell: Bell) => {
    let failures = 0;
    while (!stopping) {
      // A wake that came while the round ran is not lost: the round after it starts at once.
      bell.rung = false;
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
      if (busy || bell.rung || stopping) continue;
      await nap(deps.pollMs, bell);
    }
  };

  const subscriber = loop(
    'subscriber',
    async () => {
      await initCursor(deps);
      const read = await subscriberBatch(deps);
      if (read) wake(deliveryBell);
      return read !== null && read > 0;
    },
    subscriberBell,
  );
  const deliverer = loop('deliverer', async () => (await deliverDue(deps)) > 0, deliveryBell);

  return {
    async stop() {
      stopping = true;
      unwatch();
      for (const w of sleeps) w();
      await Promise.all([subscriber, deliverer]);
    },
  };
}

/** A loop's doorbell: `rung` remembers a wake while the loop is busy, `ring` ends its sleep. */
interface Bell {
  rung: boolean;
  ring?: () => void;
}

function wake(bell: Bell): void {
  bell.rung = true;
  bell.ring?.();
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
