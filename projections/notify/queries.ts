import type { Queryable } from '../../infra/db/pool.js';

/** A channel as the API answers it: never its secret (shown once, at creation), always its delivery state. */
export interface ChannelOut {
  channel_id: string;
  name: string;
  type: 'webhook' | 'email';
  url: string | null;
  payload: 'json' | 'text' | null;
  address: string | null;
  confirmed: boolean;
  paused: boolean;
  paused_at: string | null;
  pause_reason: string | null;
  pause_automatic: boolean;
  consecutive_failures: number;
  last_error: string | null;
  last_failure_at: string | null;
  last_success_at: string | null;
  queued: number;
  failed: number;
  subscriptions: SubscriptionOut[];
  created_at: string;
}

export interface SubscriptionOut {
  subscription_id: string;
  kinds: string[];
  node_ids: string[];
  min_severity: string;
  repeat_window_s: number;
  down_after_s: number;
  created_at: string;
}

export interface DeliveryOut {
  notification_id: string;
  kind: string;
  severity: string;
  node_id: string | null;
  title: string;
  status: 'queued' | 'attempted' | 'delivered' | 'failed' | 'cancelled';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  suppressed: number;
  created_at: string;
  next_attempt_at: string | null;
  delivered_at: string | null;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** Operators' channels (owner null) or one peer AS's. */
export async function listChannels(db: Queryable, ownerAsn: number | null, channelId?: string): Promise<ChannelOut[]> {
  const { rows } = await db.query(
    `SELECT c.*, COALESCE(s.consecutive_failures, 0) AS consecutive_failures, s.last_error, s.last_failure_at, s.last_success_at,
            (SELECT count(*)::int FROM notify_outbox o WHERE o.channel_id = c.channel_id AND o.status IN ('queued', 'attempted')) AS queued,
            (SELECT count(*)::int FROM notify_outbox o WHERE o.channel_id = c.channel_id AND o.status = 'failed') AS failed,
            COALESCE((SELECT json_agg(json_build_object('subscription_id', x.subscription_id, 'kinds', x.kinds, 'node_ids', x.node_ids,
                        'min_severity', x.min_severity, 'repeat_window_s', x.repeat_window_s, 'down_after_s', x.down_after_s, 'created_at', x.created_at)
                        ORDER BY x.created_at, x.subscription_id)
                        FROM notify_subscriptions x WHERE x.channel_id = c.channel_id), '[]'::json) AS subscriptions
       FROM notify_channels c LEFT JOIN notify_channel_state s ON s.channel_id = c.channel_id
      WHERE c.owner_asn IS NOT DISTINCT FROM $1 AND ($2::text IS NULL OR c.channel_id = $2)
      ORDER BY c.created_at, c.channel_id`,
    [ownerAsn, channelId ?? null],
  );
  return rows.map((r: Record<string, any>) => ({
    channel_id: r.channel_id,
    name: r.name,
    type: r.type,
    url: r.url,
    payload: r.payload,
    address: r.address,
    confirmed: r.confirmed,
    paused: r.paused,
    paused_at: iso(r.paused_at),
    pause_reason: r.pause_reason,
    pause_automatic: r.pause_automatic,
    consecutive_failures: r.consecutive_failures,
    last_error: r.last_error,
    last_failure_at: iso(r.last_failure_at),
    last_success_at: iso(r.last_success_at),
    queued: r.queued,
    failed: r.failed,
    subscriptions: (r.subscriptions as SubscriptionOut[]).map((s) => ({ ...s, created_at: new Date(s.created_at).toISOString() })),
    created_at: iso(r.created_at)!,
  }));
}

export async function getChannel(db: Queryable, ownerAsn: number | null, channelId: string): Promise<ChannelOut | undefined> {
  return (await listChannels(db, ownerAsn, channelId))[0];
}

/** A channel's delivery log, newest first. */
export async function listDeliveries(db: Queryable, channelId: string, limit: number): Promise<DeliveryOut[]> {
  const { rows } = await db.query(
    `SELECT id, kind, severity, node_id, title, status, attempts, last_status, last_error, suppressed, created_at, next_attempt_at, delivered_at
       FROM notify_outbox WHERE channel_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
    [channelId, limit],
  );
  return rows.map((r: Record<string, any>) => ({
    notification_id: r.id,
    kind: r.kind,
    severity: r.severity,
    node_id: r.node_id,
    title: r.title,
    status: r.status,
    attempts: r.attempts,
    last_status: r.last_status,
    last_error: r.last_error,
    suppressed: r.suppressed,
    created_at: iso(r.created_at)!,
    next_attempt_at: r.status === 'queued' || r.status === 'attempted' ? iso(r.next_attempt_at) : null,
    delivered_at: iso(r.delivered_at),
  }));
}

/** Channels of one owner, for the per-peer cap. */
export async function countChannels(db: Queryable, ownerAsn: number): Promise<number> {
  const { rows } = await db.query(`SELECT count(*)::int AS n FROM notify_channels WHERE owner_asn = $1`, [ownerAsn]);
  return rows[0].n;
}
