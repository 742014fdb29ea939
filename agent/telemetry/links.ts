/** One network interface as the runtime snapshot reports it. */
export interface LinkStats {
  name: string;
  up: boolean;
  mtu: number | null;
  rx_bytes: number;
  tx_bytes: number;
}

interface IpLink {
  ifname?: string;
  flags?: string[];
  operstate?: string;
  mtu?: number;
  stats64?: { rx?: { bytes?: number }; tx?: { bytes?: number } };
  stats?: { rx?: { bytes?: number }; tx?: { bytes?: number } };
}

/**
 * Parses `ip -j -s link` (iproute2 JSON). An interface is up when the kernel
 * says `UP`, or `UNKNOWN` (loopback, WireGuard and other virtual links that do
 * not track carrier) while administratively up with `LOWER_UP`.
 */
export function parseIpLinks(json: string): LinkStats[] {
  const links = JSON.parse(json) as IpLink[];
  return links
    .filter((l) => typeof l.ifname === 'string' && l.ifname !== '')
    .map((l) => {
      const flags = l.flags ?? [];
      const stats = l.stats64 ?? l.stats;
      return {
        name: l.ifname!,
        up: l.operstate === 'UP' || (l.operstate === 'UNKNOWN' && flags.includes('UP') && flags.includes('LOWER_UP')),
        mtu: typeof l.mtu === 'number' ? l.mtu : null,
        rx_bytes: stats?.rx?.bytes ?? 0,
        tx_bytes: stats?.tx?.bytes ?? 0,
      };
    });
}
