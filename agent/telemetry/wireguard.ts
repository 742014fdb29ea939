/** One peer line of `wg show all dump`. */
export interface WgPeer {
  public_key: string;
  /** `ip:port` or `[ip6]:port`, null when the peer has not been seen and none is configured. */
  endpoint: string | null;
  allowed_ips: string[];
  /** ISO time of the latest handshake, null when there was none. */
  latest_handshake_at: string | null;
  rx_bytes: number;
  tx_bytes: number;
  persistent_keepalive: number | null;
}

/** One interface of `wg show all dump`, without its private key (never kept, never sent). */
export interface WgInterface {
  name: string;
  public_key: string | null;
  listen_port: number | null;
  peers: WgPeer[];
}

const NONE = '(none)';

/**
 * Parses `wg show all dump` (wg(8)): tab-separated, every line starts with the
 * interface name. An interface line has 5 fields (private key, public key,
 * listen port, fwmark); a peer line has 9 (public key, preshared key,
 * endpoint, allowed IPs, latest handshake as Unix seconds with 0 for never,
 * transfer rx, transfer tx, persistent keepalive or `off`). The private and
 * preshared keys are dropped here.
 */
export function parseWgDump(text: string): WgInterface[] {
  const interfaces = new Map<string, WgInterface>();
  const named = (name: string) => {
    let found = interfaces.get(name);
    if (!found) interfaces.set(name, (found = { name, public_key: null, listen_port: null, peers: [] }));
    return found;
  };
  for (const line of text.split('\n')) {
    const f = line.split('\t');
    if (f.length === 5) {
      const iface = named(f[0]);
      iface.public_key = f[2] === NONE ? null : f[2];
      iface.listen_port = /^\d+$/.test(f[3]) && f[3] !== '0' ? Number(f[3]) : null;
    } else if (f.length === 9) {
      const handshake = Number(f[5]);
      named(f[0]).peers.push({
        public_key: f[1],
        endpoint: f[3] === NONE ? null : f[3],
        allowed_ips: f[4] === NONE ? [] : f[4].split(','),
        latest_handshake_at: handshake > 0 ? new Date(handshake * 1000).toISOString() : null,
        rx_bytes: Number(f[6]) || 0,
        tx_bytes: Number(f[7]) || 0,
        persistent_keepalive: /^\d+$/.test(f[8]) ? Number(f[8]) : null,
      });
    }
  }
  return [...interfaces.values()];
}
