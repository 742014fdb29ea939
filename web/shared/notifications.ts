/**
 * A notification channel, its subscriptions and its deliveries as the server
 * answers them (http/control/notifications/schemas.ts): one shape for the
 * console's `/admin/notifications` and the portal's `/autopeering/notifications`.
 */

/** A channel row (NotificationChannel). */
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
