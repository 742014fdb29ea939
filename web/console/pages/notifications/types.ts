/** `GET /admin/notifications/channels` row (http/control/notifications/schemas.ts NotificationChannel). */
export interface Channel {
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
  subscriptions: Subscription[];
  created_at: string;
}

export interface Subscription {
  subscription_id: string;
  kinds: string[];
  node_ids: string[];
  min_severity: string;
  repeat_window_s: number;
  down_after_s: number;
  created_at: string;
}

/** NotificationDelivery. */
export interface Delivery {
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

/** The kinds an operator can subscribe to, with what they mean (domain/notify/signals.ts). */
export const KINDS: { kind: string; label: string }[] = [
  { kind: 'flap_alert_opened', label: 'Flap alert opened' },
  { kind: 'flap_alert_cleared', label: 'Flap alert cleared' },
  { kind: 'node_health', label: 'Node health changed' },
  { kind: 'apply_failed', label: 'Apply failed' },
  { kind: 'peering_request', label: 'Peering request' },
  { kind: 'session_down', label: 'Session down for a while' },
  { kind: 'registry_sync_failed', label: 'Registry sync failed' },
  { kind: 'registration_pending', label: 'Node registration waiting' },
];

/** The state pill of a channel: what the server says, in words. */
export function channelState(c: Channel): { label: string; tone: 'ok' | 'warn' | 'bad' | 'unknown' } {
  if (c.paused) return { label: c.pause_automatic ? 'paused after failures' : 'paused', tone: 'bad' };
  if (!c.confirmed) return { label: 'waiting for confirmation', tone: 'unknown' };
  if (c.consecutive_failures > 0) return { label: `failing (${c.consecutive_failures})`, tone: 'warn' };
  return { label: 'active', tone: 'ok' };
}
