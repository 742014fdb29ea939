import ipaddr from 'ipaddr.js';

/**
 * Strict address and prefix parsing for node configuration and the desired state.
 * ipaddr.js alone accepts legacy IPv4 forms (`10.1`, `0x0a.0.0.1`) and IPv6 zone ids;
 * a routing config wants neither, so every check goes through these helpers.
 */

export type Ip = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Parsed addresses by text. ipaddr.js takes ~45 µs per IPv6 address, and every
 * write re-validates a node's whole desired state (hundreds of addresses), so
 * results are remembered. Ip objects are never mutated by their users.
 */
const parsed = new Map<string, Ip | null>();
/**
 * Enough for the addresses a fleet-wide write over 10,000 nodes reads (each
 * node's own and its neighbours'); at 20,000 the map was cleared several times
 * within one such write and every address parsed again.
 */
const PARSED_LIMIT = 200_000;
/** The shape `isValidFourPartDecimal` accepts, tested first: ipaddr.js tells an IPv6 text it is no IPv4 by throwing, which costs more than the parse. */
const FOUR_PART_DECIMAL = /^(0|[1-9]\d*)(\.(0|[1-9]\d*)){3}$/;

/** A plain address: four-part dotted IPv4 or IPv6 without a `%zone`. */
export function parseIp(text: string): Ip | null {
  let ip = parsed.get(text);
  if (ip === undefined) {
    ip = parseIpUncached(text);
    if (parsed.size >= PARSED_LIMIT) parsed.clear();
    parsed.set(text, ip);
  }
  return ip;
}

function parseIpUncached(text: string): Ip | null {
  if (FOUR_PART_DECIMAL.test(text)) return ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : null;
  if (!text.includes('%') && ipaddr.IPv6.isValid(text)) return ipaddr.IPv6.parse(text);
  return null;
}

/** `address/length` with the length inside the family's width. */
export function parsePrefix(text: string): [Ip, number] | null {
  const slash = text.indexOf('/');
  if (slash < 0 || slash !== text.lastIndexOf('/')) return null;
  const ip = parseIp(text.slice(0, slash));
  const lenText = text.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(lenText)) return null;
  const len = Number(lenText);
  return len <= (ip.kind() === 'ipv4' ? 32 : 128) ? [ip, len] : null;
}

/** An interface address: an address with an optional `/length`. */
export function parseIpWithOptionalLength(text: string): Ip | null {
  return text.includes('/') ? (parsePrefix(text)?.[0] ?? null) : parseIp(text);
}

export const isIpv6LinkLocal = (ip: Ip | null): boolean => ip !== null && ip.kind() === 'ipv6' && ip.range() === 'linkLocal';

export const formatIp = (ip: Ip): string => (ip.kind() === 'ipv6' ? (ip as ipaddr.IPv6).toRFC5952String() : ip.toString());

/** The canonical form of a prefix: network address (host bits cleared), RFC 5952 for IPv6. */
export function canonicalPrefix(text: string): string | null {
  const parsed = parsePrefix(text);
  if (!parsed) return null;
  const [ip, len] = parsed;
  const network =
    ip.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(`${ip.toString()}/${len}`) : ipaddr.IPv6.networkAddressFromCIDR(`${ip.toString()}/${len}`);
  return `${formatIp(network)}/${len}`;
}

/** A prefix or an interface address (`a`, `a/len`) as a canonical network, `a` alone as its host route; null when it is neither. */
export function networkOf(text: string): string | null {
  if (text.includes('/')) return canonicalPrefix(text);
  const ip = parseIp(text);
  return ip ? canonicalPrefix(`${text}/${ip.kind() === 'ipv4' ? 32 : 128}`) : null;
}

/**
 * The string formats the desired-state schema uses. Anyone validating a desired
 * state (the control server, the node agent) registers these on its ajv instance.
 */
export const ADDRESS_FORMATS: Record<string, (text: string) => boolean> = {
  'ip-address': (t) => parseIp(t) !== null,
  'ipv4-address': (t) => parseIp(t)?.kind() === 'ipv4',
  'ipv6-address': (t) => parseIp(t)?.kind() === 'ipv6',
  'ipv6-link-local': (t) => isIpv6LinkLocal(parseIp(t)),
  'ip-prefix': (t) => parsePrefix(t) !== null,
  'ipv4-prefix': (t) => parsePrefix(t)?.[0].kind() === 'ipv4',
  'ipv6-prefix': (t) => parsePrefix(t)?.[0].kind() === 'ipv6',
  /** An interface address or allowed IP: address with optional `/length`. */
  'ip-interface': (t) => parseIpWithOptionalLength(t) !== null,
};
