/** The console's notification rows are the shared ones (`GET /admin/notifications/channels`). */
import type { NotificationChannel } from '../../../shared/api.js';

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
export function channelState(c: NotificationChannel): { label: string; tone: 'ok' | 'warn' | 'bad' | 'unknown' } {
  if (c.paused) return { label: c.pause_automatic ? 'paused after failures' : 'paused', tone: 'bad' };
  if (!c.confirmed) return { label: 'waiting for confirmation', tone: 'unknown' };
  if (c.consecutive_failures > 0) return { label: `failing (${c.consecutive_failures})`, tone: 'warn' };
  return { label: 'active', tone: 'ok' };
}
