import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { channelDecider, channelStream } from '../../domain/notify/channel.js';
import { IDEMPOTENCY_HEADER, mailOf, signature, SIGNATURE_HEADER, TIMESTAMP_HEADER, webhookBody } from '../../domain/notify/payload.js';
import type { EventStore } from '../../infra/eventstore/types.js';
import type { Logger } from '../../infra/logger.js';
import type { MailSender } from '../../infra/mail.js';
import { claimDue, recordAttempt, type AttemptOutcome, type Claimed } from '../../infra/notify/outbox.js';
import { postWebhook, type WebhookPolicy } from '../../infra/notify/webhook.js';
import { handleCommand } from '../handle.js';

export interface DeliveryDeps {
  pool: pg.Pool;
  store: EventStore;
  log: Logger;
  now: () => Date;
  /** Absent: e-mail channels fail their attempts with a clear error (SMTP_URL unset). */
  mail: MailSender | undefined;
  webhook: WebhookPolicy;
  retryBaseMs: number;
  pauseAfter: number;
  leaseMs: number;
  /** This instance's name in leases and the delivery log. */
  instance: string;
}

/** At most this many notifications claimed and sent at once by one instance. */
const BATCH = 16;
const MAX_BACKOFF_MS = 3_600_000;

/** The delay before attempt `attempts + 1`: the base doubled per attempt, at most an hour, with ±20 % jitter so retries of a burst spread out. */
export function retryDelayMs(baseMs: number, attempts: number, random = Math.random): number {
  const plain = Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(plain * (0.8 + 0.4 * random()));
}

export const newInstanceName = (): string => `notify-${randomUUID().slice(0, 8)}`;

/**
 * One round of delivery: claim due notifications (leased, SKIP LOCKED), send
 * them concurrently, record each attempt. A channel whose consecutive failures
 * reach `pauseAfter` is paused (an event: the API and the console show it).
 * Returns how many were claimed.
 */
export async function deliverDue(deps: DeliveryDeps): Promise<number> {
  const claimed = await claimDue(deps.pool, deps.instance, deps.now(), deps.leaseMs, BATCH);
  await Promise.all(claimed.map((c) => deliverOne(deps, c)));
  return claimed.length;
}

async function deliverOne(deps: DeliveryDeps, c: Claimed): Promise<void> {
  const started = performance.now();
  const outcome = await send(deps, c).then(
    (r): AttemptOutcome => ({ ...r, duration_ms: Math.round(performance.now() - started) }),
    (err: Error): AttemptOutcome => ({ ok: false, status_code: null, error: errorText(err), duration_ms: Math.round(performance.now() - started) }),
  );
  const now = deps.now();
  const retryAt = new Date(now.getTime() + retryDelayMs(deps.retryBaseMs, c.attempts + 1));
  const failures = await recordAttempt(deps.pool, c, deps.instance, outcome, now, retryAt);
  if (!outcome.ok) deps.log.warn({ notification: c.id, channel: c.channel_id, attempt: c.attempts + 1, error: outcome.error }, 'notification attempt failed');
  if (failures !== null && failures >= deps.pauseAfter) {
    await handleCommand(
      deps.store,
      channelStream(c.channel_id),
      channelDecider,
      {
        type: 'PauseChannel',
        channel_id: c.channel_id,
        reason: `${failures} consecutive failed deliveries; last: ${outcome.error}`,
        automatic: true,
        now: now.toISOString(),
      },
      { actor: 'notify-deliverer', recordedAt: now.toISOString() },
    ).catch((err) => deps.log.error({ err, channel: c.channel_id }, 'pausing a failing notification channel failed'));
  }
}

async function send(deps: DeliveryDeps, c: Claimed): Promise<Omit<AttemptOutcome, 'duration_ms'>> {
  if (c.type === 'email') {
    if (!deps.mail) return { ok: false, status_code: null, error: 'no mail sender: SMTP_URL is not set' };
    const mail = c.kind === 'email_confirmation' ? { subject: c.document.title, text: `${c.document.lines.join('\n')}\n` } : mailOf(c.document);
    await deps.mail.send({ to: c.address!, ...mail });
    return { ok: true, status_code: null, error: null };
  }
  const body = webhookBody(c.document, c.payload ?? 'json');
  const timestamp = Math.floor(deps.now().getTime() / 1000);
  const res = await postWebhook(
    c.url!,
    body,
    { [SIGNATURE_HEADER]: signature(c.secret!, timestamp, body), [TIMESTAMP_HEADER]: String(timestamp), [IDEMPOTENCY_HEADER]: c.id },
    deps.webhook,
  );
  if (res.status >= 200 && res.status < 300) return { ok: true, status_code: res.status, error: null };
  const why = res.status >= 300 && res.status < 400 ? 'redirect not followed' : res.body.trim().slice(0, 200) || 'no body';
  return { ok: false, status_code: res.status, error: `HTTP ${res.status}: ${why}` };
}

function errorText(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code;
  return (code && !err.message.includes(code) ? `${code}: ${err.message}` : err.message).slice(0, 500);
}
