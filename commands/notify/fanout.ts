import type pg from 'pg';
import { PEER_SIGNAL_KINDS, filterMatches, type Severity, type Signal, type SignalKind } from '../../domain/notify/signals.js';
import { downFor, forPeer } from '../../domain/notify/from-events.js';
import { withTransaction, type Queryable } from '../../infra/db/pool.js';
import { enqueue, type EnqueueOutcome } from '../../infra/notify/outbox.js';

/** What fanning out needs besides the database. */
export interface FanoutOptions {
  floodLimit: number;
}

interface SubscriptionRow {
  subscription_id: string;
  channel_id: string;
  owner_asn: string | null;
  kinds: SignalKind[];
  node_ids: string[];
  min_severity: Severity;
  repeat_window_s: number;
  down_after_s: number;
  created_at: Date;
}

/**
 * The subscriptions a signal reaches, one per channel (the first by creation
 * when several of a channel match). A peer's channel matches only the kinds
 * about a peering and only signals whose peer AS is its owner: a peer never
 * receives another peer's events. A subscription made after the signal does not
 * get it (a replay after a reset cursor stays quiet).
 */
async function reached(db: Queryable, signal: Signal): Promise<SubscriptionRow[]> {
  const { rows } = await db.query(
    `SELECT s.subscription_id, s.channel_id, c.owner_asn, s.kinds, s.node_ids, s.min_severity, s.repeat_window_s, s.down_after_s, s.created_at
       FROM notify_subscriptions s JOIN notify_channels c ON c.channel_id = s.channel_id
      WHERE s.created_at <= $1
      ORDER BY s.created_at, s.subscription_id`,
    [signal.at],
  );
  const byChannel = new Map<string, SubscriptionRow>();
  for (const row of rows as SubscriptionRow[]) {
    if (byChannel.has(row.channel_id)) continue;
    if (row.owner_asn !== null) {
      if (signal.peer_asn === null || Number(row.owner_asn) !== signal.peer_asn) continue;
      if (!PEER_SIGNAL_KINDS.includes(signal.kind as SignalKind)) continue;
    }
    if (filterMatches(row, signal)) byChannel.set(row.channel_id, row);
  }
  return [...byChannel.values()];
}

/**
 * Queues a signal for every channel it reaches, in the caller's transaction.
 * `pending` signals (a session gone down) wait for each subscription's
 * `down_after_s` and carry the key their cancellation uses.
 */
export async function fanOut(db: Queryable, signal: Signal, options: FanoutOptions, pending?: { cancelKey: string }): Promise<EnqueueOutcome[]> {
  const outcomes: EnqueueOutcome[] = [];
  for (const sub of await reached(db, signal)) {
    const at = new Date(signal.at);
    outcomes.push(
      await enqueue(db, {
        channel_id: sub.channel_id,
        subscription_id: sub.subscription_id,
        signal: tailored(signal, sub, pending !== undefined),
        not_before: pending ? new Date(at.getTime() + sub.down_after_s * 1000) : at,
        cancel_key: pending?.cancelKey ?? null,
        repeat_window_s: sub.repeat_window_s,
        flood_limit: options.floodLimit,
      }),
    );
  }
  return outcomes;
}

/** The signal as this subscription's channel sends it: with the down time it waited for, and a peer's own side named. */
function tailored(signal: Signal, sub: SubscriptionRow, pending: boolean): Signal {
  const waited = pending ? downFor(signal, sub.down_after_s) : signal;
  return sub.owner_asn === null ? waited : forPeer(waited, Number(sub.owner_asn));
}

/**
 * A signal that no event carries (an apply that failed, a registry sync that
 * failed): fanned out at once in its own transaction. Its `id` makes a repeat
 * of the same fact a no-op.
 */
export async function raiseSignal(pool: pg.Pool, signal: Signal, options: FanoutOptions): Promise<EnqueueOutcome[]> {
  return withTransaction(pool, (tx) => fanOut(tx, signal, options));
}
