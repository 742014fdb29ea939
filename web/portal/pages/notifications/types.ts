/** The portal's notification rows are the shared ones (`GET /autopeering/notifications/channels`). */
import type { NotificationChannel } from '../../../shared/api.js';

/** The kinds a peer may subscribe to (domain/notify/signals.ts PEER_SIGNAL_KINDS), said from the peer's side. */
export const PEER_KINDS: { kind: string; label: string }[] = [
  { kind: 'session_down', label: 'A session of mine stays down' },
  { kind: 'flap_alert_opened', label: 'A flap alert opens on my session or prefix' },
  { kind: 'flap_alert_cleared', label: 'That flap alert clears' },
  { kind: 'peering_request', label: 'A peering of mine is set up' },
];

/** Kinds of the delivery log that are no subscription's (a test send, the code mail, a flood's summary). */
const OTHER_KINDS: Record<string, string> = { test: 'Test', email_confirmation: 'Confirmation code', summary: 'Summary of a burst' };

export const kindLabel = (kind: string): string => PEER_KINDS.find((k) => k.kind === kind)?.label ?? OTHER_KINDS[kind] ?? kind;

/** The state pill of a channel: what the server says, in words. */
export function channelState(c: NotificationChannel): { label: string; tone: 'ok' | 'warn' | 'bad' | 'unknown' } {
  if (c.paused) return { label: c.pause_automatic ? 'paused after failures' : 'paused', tone: 'bad' };
  if (!c.confirmed) return { label: 'waiting for the code', tone: 'unknown' };
  if (c.consecutive_failures > 0) return { label: `failing (${c.consecutive_failures})`, tone: 'warn' };
  return { label: 'active', tone: 'ok' };
}
