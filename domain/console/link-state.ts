/**
 * Link state of a WireGuard peer by handshake freshness (document 3,
 * `/ui/nodes/{id}/links`; the thresholds are ours, docs/decisions.md "Console
 * layer"). A tunnel that carries traffic (BGP keepalives at least) re-handshakes
 * every 2 minutes (WireGuard's REKEY_AFTER_TIME, 120 s) and its keys stop working
 * 180 s after a handshake (REJECT_AFTER_TIME): a handshake within 180 s is a
 * working link. Up to 600 s it may be a missed rekey or an agent that reports
 * late; beyond, or never, the link is down.
 */
export type LinkState = 'up' | 'stale' | 'down';

export const LINK_THRESHOLDS = { up_seconds: 180, stale_seconds: 600 } as const;

/** The state of a link whose latest handshake is `handshakeAt` (null: none), seen at `now`. Both bounds inclusive. */
export function linkStateOf(handshakeAt: Date | null, now: Date): LinkState {
  if (!handshakeAt) return 'down';
  const age = (now.getTime() - handshakeAt.getTime()) / 1000;
  if (age <= LINK_THRESHOLDS.up_seconds) return 'up';
  if (age <= LINK_THRESHOLDS.stale_seconds) return 'stale';
  return 'down';
}
