import { LINK_THRESHOLDS, linkStateOf, type LinkState } from '../../../../domain/console/link-state.js';
import { byString } from '../../../../domain/public/facts.js';
import type { RuntimeSnapshot } from '../../../../domain/telemetry/reports.js';
import type { LinkPeering } from '../../../../projections/fleet/queries.js';

export interface LinkRow {
  interface: string;
  /** Null for an interface without a peer (then `down`). */
  peer_public_key: string | null;
  endpoint: string | null;
  latest_handshake_at: string | null;
  /** Seconds since the handshake at the server's clock; null without one. */
  handshake_age_seconds: number | null;
  state: LinkState;
  rx_bytes: number | null;
  tx_bytes: number | null;
  peering: LinkPeering | null;
}

/**
 * `GET /ui/nodes/{id}/links`: one row per WireGuard peer of the latest runtime
 * snapshot (an interface without a peer is one `down` row), its state by
 * handshake freshness at `now` (`domain/console/link-state.ts`), ordered by
 * interface and peer key, and the counts per state.
 */
export function linksOf(snapshot: RuntimeSnapshot, peerings: ReadonlyMap<string, LinkPeering | null>, now: Date) {
  const rows: LinkRow[] = [];
  for (const wg of snapshot.wireguard_interfaces) {
    const peering = peerings.get(wg.name) ?? null;
    if (wg.peers.length === 0) {
      rows.push({
        interface: wg.name,
        peer_public_key: null,
        endpoint: null,
        latest_handshake_at: null,
        handshake_age_seconds: null,
        state: 'down',
        rx_bytes: null,
        tx_bytes: null,
        peering,
      });
    }
    for (const p of wg.peers) {
      const handshake = p.latest_handshake_at ? new Date(p.latest_handshake_at) : null;
      rows.push({
        interface: wg.name,
        peer_public_key: p.public_key,
        endpoint: p.endpoint ?? null,
        latest_handshake_at: handshake ? handshake.toISOString() : null,
        handshake_age_seconds: handshake ? Math.max(0, Math.floor((now.getTime() - handshake.getTime()) / 1000)) : null,
        state: linkStateOf(handshake, now),
        rx_bytes: p.rx_bytes,
        tx_bytes: p.tx_bytes,
        peering,
      });
    }
  }
  rows.sort((a, b) => byString(a.interface, b.interface) || byString(a.peer_public_key ?? '', b.peer_public_key ?? ''));
  const count = (state: LinkState) => rows.filter((r) => r.state === state).length;
  return { thresholds: { ...LINK_THRESHOLDS }, summary: { up: count('up'), stale: count('stale'), down: count('down') }, links: rows };
}
