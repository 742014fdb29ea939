import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Signal } from '../../domain/notify/signals.js';
import { documentOf, type NotificationDocument } from '../../domain/notify/payload.js';
import type { Queryable } from '../db/pool.js';

export const notifyMigrations = { name: 'notify-outbox', dir: fileURLToPath(new URL('./migrations', import.meta.url)) };

/** A notification is retried for this long after it was queued, then it fails (issue 32: up to 24 h). */
export const RETRY_FOR_MS = 24 * 3_600_000;
/** A flood: this many notifications to one channel within FLOOD_WINDOW_MS, after which the rest of the minute is one summary. */
export const FLOOD_WINDOW_MS = 60_000;
/** Subjects a summary lists (the count covers all). */
const SUMMARY_ITEMS = 10;

/** The idempotency key of one signal to one channel: the same on every attempt and on a replay. */
export const notificationId = (signalId: string, channelId: string): string =>
  `ntf_${createHash('sha256').update(`${signalId}|${channelId}`).digest('hex').slice(0, 32)}`;

export interface Enqueue {
  channel_id: string;
  subscription_id: string | null;
  signal: Signal;
  /** When it may first be sent (later than the signal for a pending session_down). */
  not_before: Date;
  cancel_key: string | null;
  repeat_window_s: number;
  flood_limit: number;
}

export type EnqueueOutcome = 'queued' | 'suppressed' | 'summarised' | 'duplicate';

/**
 * Queues one notification, unless (1) the channel had one of the same group
 * within the repeat window (its `suppressed` count grows instead), or (2) the
 * channel is flooded: FLOOD_WINDOW_MS already holds `flood_limit` rows, and this
 * one joins the minute's summary row (sent at the minute's end). The row id is
 * the idempotency key, so queueing the same signal twice is a no-op.
 */
export async function enqueue(db: Queryable, e: Enqueue): Promise<EnqueueOutcome> {
  const id = notificationId(e.signal.id, e.channel_id);
  const at = new Date(e.signal.at);
  const { rows: existing } = await db.query(`SELECT 1 FROM notify_outbox WHERE id = $1`, [id]);
  if (existing.length > 0) return 'duplicate';
  if (e.repeat_window_s > 0) {
    const { rowCount } = await db.query(
      `UPDATE notify_outbox SET suppressed = suppressed + 1
        WHERE id = (SELECT id FROM notify_outbox
                     WHERE channel_id = $1 AND group_key = $2 AND status <> 'cancelled'
                       AND created_at > $3::timestamptz - $4 * interval '1 second' AND created_at <= $3
                     ORDER BY created_at DESC LIMIT 1)`,
      [e.channel_id, e.signal.group, at, e.repeat_window_s],
    );
    if (rowCount) return 'suppressed';
  }
  const { rows: recent } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM notify_outbox
      WHERE channel_id = $1 AND kind NOT IN ('summary', 'test', 'email_confirmation')
        AND created_at > $2::timestamptz - $3 * interval '1 millisecond' AND created_at <= $2`,
    [e.channel_id, at, FLOOD_WINDOW_MS],
  );
  if (recent[0].n >= e.flood_limit && (await summarise(db, e, at))) return 'summarised';
  await insertRow(db, id, e, documentOf(id, e.signal));
  return 'queued';
}

async function insertRow(db: Queryable, id: string, e: Enqueue, document: NotificationDocument): Promise<void> {
  const s = e.signal;
  await db.query(
    `INSERT INTO notify_outbox (id, channel_id, subscription_id, kind, severity, node_id, peer_asn, group_key, title, document, status,
                                next_attempt_at, cancel_key, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'queued', $11, $12, $13, $13::timestamptz + $14 * interval '1 millisecond')
     ON CONFLICT (id) DO NOTHING`,
    [
      id,
      e.channel_id,
      e.subscription_id,
      s.kind,
      s.severity,
      s.node_id,
      s.peer_asn,
      s.group,
      s.title,
      JSON.stringify(document),
      e.not_before,
      e.cancel_key,
      new Date(s.at),
      RETRY_FOR_MS,
    ],
  );
}

/**
 * Adds the signal to its minute's summary row of the channel, queued for the
 * minute's end. False when that summary has already gone out (the signal is
 * then queued on its own, never lost).
 */
async function summarise(db: Queryable, e: Enqueue, at: Date): Promise<boolean> {
  const bucket = Math.floor(at.getTime() / FLOOD_WINDOW_MS) * FLOOD_WINDOW_MS;
  const id = `ntf_summary_${createHash('sha256').update(`${e.channel_id}|${bucket}`).digest('hex').slice(0, 24)}`;
  const { rowCount } = await db.query(
    `UPDATE notify_outbox
        SET title = 'Notification flood: ' || ((document #>> '{facts,count}')::int + 1) || ' in one minute',
            document = jsonb_set(
              jsonb_set(
                jsonb_set(document, '{facts,count}', to_jsonb((document #>> '{facts,count}')::int + 1)),
                '{lines}', CASE WHEN jsonb_array_length(document -> 'lines') < $3 THEN (document -> 'lines') || to_jsonb($2::text) ELSE document -> 'lines' END),
              '{title}', to_jsonb('Notification flood: ' || ((document #>> '{facts,count}')::int + 1) || ' in one minute'))
      WHERE id = $1 AND status = 'queued'`,
    [id, e.signal.title, SUMMARY_ITEMS],
  );
  if (rowCount) return true;
  const { rows: gone } = await db.query(`SELECT 1 FROM notify_outbox WHERE id = $1`, [id]);
  if (gone.length > 0) return false;
  const signal: Signal = {
    id: `summary ${e.channel_id} ${bucket}`,
    kind: 'summary',
    severity: e.signal.severity,
    node_id: null,
    nodes: [],
    peer_asn: e.signal.peer_asn,
    group: `summary ${bucket}`,
    title: 'Notification flood: 1 in one minute',
    lines: [e.signal.title],
    at: new Date(bucket).toISOString(),
    facts: { count: 1, from: new Date(bucket).toISOString(), to: new Date(bucket + FLOOD_WINDOW_MS).toISOString() },
  };
  await insertRow(db, id, { ...e, signal, not_before: new Date(bucket + FLOOD_WINDOW_MS), cancel_key: null }, documentOf(id, signal));
  return true;
}

/** Cancels pending notifications (a session that came back before its down time passed). */
export async function cancelPending(db: Queryable, cancelKey: string, at: Date): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE notify_outbox SET status = 'cancelled', lease_until = NULL, leased_by = NULL
      WHERE cancel_key = $1 AND status = 'queued' AND attempts = 0 AND next_attempt_at > $2`,
    [cancelKey, at],
  );
  return rowCount ?? 0;
}

/** Cancels whatever a deleted channel still had queued. */
export async function cancelChannel(db: Queryable, channelId: string): Promise<void> {
  await db.query(`UPDATE notify_outbox SET status = 'cancelled', lease_until = NULL WHERE channel_id = $1 AND status IN ('queued', 'attempted')`, [channelId]);
}

/** A claimed notification with what its channel needs to send it. */
export interface Claimed {
  id: string;
  channel_id: string;
  kind: string;
  attempts: number;
  document: NotificationDocument;
  expires_at: Date;
  type: 'webhook' | 'email';
  url: string | null;
  payload: 'json' | 'text' | null;
  secret: string | null;
  address: string | null;
}

/**
 * Claims due notifications for this instance: rows locked `FOR UPDATE SKIP
 * LOCKED` get a lease, so two instances never take the same row, and a row of
 * an instance killed while sending is taken again once its lease ends
 * (at-least-once; the receiver deduplicates by the idempotency key). Paused
 * channels keep their rows, except test sends; an unconfirmed address gets
 * only its confirmation code.
 */
export async function claimDue(db: Queryable, instance: string, now: Date, leaseMs: number, limit: number): Promise<Claimed[]> {
  const { rows } = await db.query(
    `WITH due AS (
       SELECT o.id FROM notify_outbox o JOIN notify_channels c ON c.channel_id = o.channel_id
        WHERE o.status IN ('queued', 'attempted') AND o.next_attempt_at <= $2
          AND (o.lease_until IS NULL OR o.lease_until <= $2)
          AND (NOT c.paused OR o.kind = 'test')
          AND (c.confirmed OR o.kind = 'email_confirmation')
        ORDER BY o.next_attempt_at, o.id
        LIMIT $4
        FOR UPDATE OF o SKIP LOCKED
     ), claimed AS (
       UPDATE notify_outbox o SET lease_until = $2::timestamptz + $3 * interval '1 millisecond', leased_by = $1
         FROM due WHERE o.id = due.id
       RETURNING o.id, o.channel_id, o.kind, o.attempts, o.document, o.expires_at, o.next_attempt_at
     )
     SELECT claimed.id, claimed.channel_id, claimed.kind, claimed.attempts, claimed.document, claimed.expires_at,
            c.type, c.url, c.payload, c.secret, c.address
       FROM claimed JOIN notify_channels c ON c.channel_id = claimed.channel_id
      ORDER BY claimed.next_attempt_at, claimed.id`,
    [instance, now, leaseMs, limit],
  );
  return rows as Claimed[];
}

export interface AttemptOutcome {
  ok: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/**
 * Records one attempt of a claimed row (only while this instance still holds
 * it: a row whose lease passed to another instance is left to that one).
 * Returns the channel's consecutive failures after it, or null when the row
 * was no longer ours.
 */
export async function recordAttempt(db: Queryable, c: Claimed, instance: string, outcome: AttemptOutcome, now: Date, retryAt: Date): Promise<number | null> {
  const { rows } = await db.query(
    `UPDATE notify_outbox
        SET attempts = attempts + 1, lease_until = NULL, leased_by = NULL, last_status = $4, last_error = $5,
            status = CASE WHEN $3 THEN 'delivered' WHEN $6::timestamptz >= expires_at THEN 'failed' ELSE 'attempted' END,
            delivered_at = CASE WHEN $3 THEN $6::timestamptz ELSE NULL END,
            next_attempt_at = CASE WHEN $3 THEN next_attempt_at ELSE $7::timestamptz END
      WHERE id = $1 AND leased_by = $2
      RETURNING attempts`,
    [c.id, instance, outcome.ok, outcome.status_code, outcome.error, now, retryAt],
  );
  if (rows.length === 0) return null;
  await db.query(
    `INSERT INTO notify_attempts (outbox_id, channel_id, attempt, at, ok, status_code, error, duration_ms, instance) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [c.id, c.channel_id, rows[0].attempts, now, outcome.ok, outcome.status_code, outcome.error, outcome.duration_ms, instance],
  );
  // A test send says something about the receiver, but only real notifications count towards pausing.
  const counts = c.kind !== 'test';
  const { rows: state } = await db.query<{ consecutive_failures: number }>(
    `INSERT INTO notify_channel_state AS s (channel_id, consecutive_failures, last_error, last_failure_at, last_success_at)
     VALUES ($1, CASE WHEN $2 OR NOT $5 THEN 0 ELSE 1 END, CASE WHEN $2 THEN NULL ELSE $3 END,
             CASE WHEN $2 THEN NULL ELSE $4::timestamptz END, CASE WHEN $2 THEN $4::timestamptz ELSE NULL END)
     ON CONFLICT (channel_id) DO UPDATE SET
       consecutive_failures = CASE WHEN $2 THEN 0 WHEN NOT $5 THEN s.consecutive_failures ELSE s.consecutive_failures + 1 END,
       last_error = CASE WHEN $2 THEN s.last_error ELSE $3 END,
       last_failure_at = CASE WHEN $2 THEN s.last_failure_at ELSE $4::timestamptz END,
       last_success_at = CASE WHEN $2 THEN $4::timestamptz ELSE s.last_success_at END
     RETURNING consecutive_failures`,
    [c.channel_id, outcome.ok, outcome.error, now, counts],
  );
  return state[0].consecutive_failures;
}

/** Resuming a channel starts its failure count again. */
export async function resetFailures(db: Queryable, channelId: string): Promise<void> {
  await db.query(`UPDATE notify_channel_state SET consecutive_failures = 0 WHERE channel_id = $1`, [channelId]);
}

/** Finished notifications (and their attempts) are kept this long for the delivery log, then pruned. */
export const OUTBOX_KEPT_MS = 30 * 86_400_000;

/** Deletes notifications finished (delivered, failed, cancelled) more than OUTBOX_KEPT_MS ago; answers how many. */
export async function pruneOutbox(db: Queryable, now: Date): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM notify_outbox
      WHERE status IN ('delivered', 'failed', 'cancelled') AND COALESCE(delivered_at, next_attempt_at, created_at) < $1::timestamptz - $2 * interval '1 millisecond'`,
    [now, OUTBOX_KEPT_MS],
  );
  return rowCount ?? 0;
}

export interface OutboxCounts {
  queued: number;
  attempted: number;
  failed: number;
  paused_channels: number;
}

/** What the metrics show of the outbox: waiting and given-up notifications, and paused channels. */
export async function outboxCounts(db: Queryable): Promise<OutboxCounts> {
  const { rows } = await db.query(
    `SELECT count(*) FILTER (WHERE status = 'queued')::int AS queued, count(*) FILTER (WHERE status = 'attempted')::int AS attempted,
            count(*) FILTER (WHERE status = 'failed')::int AS failed,
            (SELECT count(*)::int FROM notify_channels WHERE paused) AS paused_channels
       FROM notify_outbox WHERE status IN ('queued', 'attempted', 'failed')`,
  );
  return rows[0] as OutboxCounts;
}
