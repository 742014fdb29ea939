import ipaddr from 'ipaddr.js';

/**
 * Which addresses an outbound webhook may reach (issue 32, safe outbound
 * requests). Loopback, link-local, private (RFC 1918, ULA fd00::/8, CGNAT),
 * dn42's own ranges, multicast, reserved and cloud metadata addresses are
 * refused unless an operator lists them (`NOTIFY_WEBHOOK_ALLOW`). Pure: the
 * resolved address comes in; the sender checks every address it connects to.
 */

/** Ranges refused besides ipaddr.js's non-`unicast` classes (which cover loopback, private, linkLocal, uniqueLocal, carrierGradeNat, ...). */
const EXTRA_REFUSED: readonly string[] = [
  // dn42 (IPv4 172.20.0.0/14 is inside RFC 1918's 172.16/12, listed for the record) and its IPv6 ULA space (inside fd00::/8).
  '172.20.0.0/14',
  'fd00::/8',
  // Cloud metadata services (also link-local / ULA, named for the record).
  '169.254.169.254/32',
  'fd00:ec2::254/128',
  '100.100.100.200/32',
  // "This network", benchmarking and documentation ranges are not reachable services either.
  '0.0.0.0/8',
  '198.18.0.0/15',
];

export type AddressVerdict = { allowed: true } | { allowed: false; reason: string };

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses `address/length` items (the configuration's canonical form). */
export function parseCidrs(items: readonly string[]): Cidr[] {
  return items.map((item) => ipaddr.parseCIDR(item));
}

const refused = parseCidrs(EXTRA_REFUSED);

function within(ip: ipaddr.IPv4 | ipaddr.IPv6, cidrs: readonly Cidr[]): boolean {
  return cidrs.some(([net, len]) => net.kind() === ip.kind() && ip.match([net, len] as never));
}

/**
 * The verdict on one resolved address. IPv4-mapped IPv6 addresses are judged
 * as the IPv4 address they carry (`::ffff:127.0.0.1` is loopback).
 */
export function judgeAddress(address: string, allow: readonly Cidr[]): AddressVerdict {
  if (!ipaddr.isValid(address)) return { allowed: false, reason: `${address} is not an IP address` };
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (within(ip, allow)) return { allowed: true };
  const range = ip.range();
  if (range !== 'unicast') return { allowed: false, reason: `${ip.toString()} is not a public address (${range})` };
  if (within(ip, refused)) return { allowed: false, reason: `${ip.toString()} is not a public address (dn42, metadata or reserved range)` };
  return { allowed: true };
}
