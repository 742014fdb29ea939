import type { WireguardTraffic } from '../../domain/telemetry/reports.js';
import type { WgInterface } from './wireguard.js';

/** The 30 s `POST /agent/wireguard-traffic` body: cumulative bytes per peer (the server sums them). */
export function trafficBody(nodeId: string, interfaces: WgInterface[], now = new Date()): WireguardTraffic {
  return {
    node_id: nodeId,
    captured_at: now.toISOString(),
    peers: interfaces
      .flatMap((i) => i.peers.map((p) => ({ interface: i.name, public_key: p.public_key, rx_bytes: p.rx_bytes, tx_bytes: p.tx_bytes })))
      .slice(0, 4096),
  };
}
