import { formatIp, parseIpWithOptionalLength } from '../../domain/net/ip.js';
import { runCommand } from '../exec.js';

/** An address as the interface plan writes it (`fe80::1/64`, peer `fe80::2/128`, or a bare address) on a device. */
export interface DeviceAddress {
  address: string;
  peer: string | null;
  dev: string;
}

/** One entry of `ip -j address show`'s `addr_info`: `address` is the peer of a point-to-point address. */
export interface KernelAddress {
  local: string;
  prefixlen: number;
  address?: string;
}

/** The addresses the kernel holds on `dev` (none when the device does not exist). */
export async function addressesOf(ip: readonly string[], dev: string): Promise<KernelAddress[]> {
  const outcome = await runCommand([...ip, '-j', 'address', 'show', 'dev', dev], 10_000);
  if (outcome.code !== 0) return [];
  try {
    const links = JSON.parse(outcome.stdout) as { addr_info?: KernelAddress[] }[];
    return links.flatMap((l) => l.addr_info ?? []);
  } catch {
    return [];
  }
}

/** `address/length` as the kernel prints it: canonical address text, the length (full width when absent). */
function normalised(text: string): { ip: string; length: number } | null {
  const ip = parseIpWithOptionalLength(text);
  if (!ip) return null;
  const slash = text.indexOf('/');
  return { ip: formatIp(ip), length: slash < 0 ? (ip.kind() === 'ipv4' ? 32 : 128) : Number(text.slice(slash + 1)) };
}

const canonical = (text: string | undefined): string | null => (text === undefined ? null : (normalised(text)?.ip ?? null));

/**
 * Whether the kernel holds `wanted`: the same local address and, for a
 * point-to-point address, the same peer with the peer's length (that is the
 * length the kernel keeps), else the address's own length.
 */
export function addressPresent(held: readonly KernelAddress[], wanted: Omit<DeviceAddress, 'dev'>): boolean {
  const local = normalised(wanted.address);
  const peer = wanted.peer === null ? null : normalised(wanted.peer);
  if (!local || (wanted.peer !== null && !peer)) return false;
  return held.some((h) => {
    if (canonical(h.local) !== local.ip) return false;
    if (peer) return canonical(h.address) === peer.ip && h.prefixlen === peer.length;
    return h.prefixlen === local.length;
  });
}
