import type { IncomingMessage } from 'node:http';
import type { Request } from 'express';
import ipaddr from 'ipaddr.js';

/** The edge proxy's connecting-client header (the de-facto standard one). */
export const EDGE_CLIENT_HEADER = 'cf-connecting-ip';

type Ip = ipaddr.IPv4 | ipaddr.IPv6;

/** The proxies whose forwarding headers a service believes (`TRUSTED_PROXIES`), parsed once. */
export class TrustedProxies {
  private readonly ranges: [Ip, number][];

  /** `cidrs` in the configuration's canonical `address/length` form. */
  constructor(cidrs: readonly string[] = []) {
    this.ranges = cidrs.map((c) => ipaddr.parseCIDR(c));
  }

  get empty(): boolean {
    return this.ranges.length === 0;
  }

  trusts(address: string | undefined): boolean {
    const ip = parse(address);
    return ip !== undefined && this.ranges.some(([range, len]) => range.kind() === ip.kind() && ip.match(range, len));
  }
}

const NONE = new TrustedProxies();

/** Where `createServiceApp` keeps the service's trusted proxies (`app.locals`). */
export const TRUSTED_PROXIES_LOCAL = 'trustedProxies';

/**
 * The client's address. The forwarding headers are believed only from a trusted
 * proxy (`TRUSTED_PROXIES`; none by default): then the edge proxy's
 * connecting-client header, else the nearest `X-Forwarded-For` hop that is not
 * itself a trusted proxy (walking from the right, since a client can write any
 * hop on the left). Otherwise, and for any header that is not an address, the
 * TCP peer.
 */
export function clientAddress(req: Request | IncomingMessage, trusted: TrustedProxies = trustedOf(req)): string {
  const peer = canonical(req.socket.remoteAddress) ?? 'unknown';
  if (trusted.empty || !trusted.trusts(peer)) return peer;
  const edge = req.headers[EDGE_CLIENT_HEADER];
  const edgeIp = typeof edge === 'string' ? canonical(edge.trim()) : undefined;
  if (edgeIp) return edgeIp;
  const forwarded = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? ''))
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = canonical(hops[i]);
    if (!hop) return peer;
    if (i === 0 || !trusted.trusts(hop)) return hop;
  }
  return peer;
}

function trustedOf(req: Request | IncomingMessage): TrustedProxies {
  const locals = (req as Request).app?.locals as Record<string, unknown> | undefined;
  const value = locals?.[TRUSTED_PROXIES_LOCAL];
  return value instanceof TrustedProxies ? value : NONE;
}

function parse(address: string | undefined): Ip | undefined {
  if (!address || address.length > 64) return undefined;
  try {
    if (ipaddr.IPv4.isValidFourPartDecimal(address)) return ipaddr.IPv4.parse(address);
    if (address.includes('%') || !ipaddr.IPv6.isValid(address)) return undefined;
    const ip = ipaddr.IPv6.parse(address);
    return ip.isIPv4MappedAddress() ? ip.toIPv4Address() : ip;
  } catch {
    return undefined;
  }
}

/** An address in its canonical text (IPv4-mapped IPv6 as IPv4, RFC 5952 for IPv6), or undefined. */
function canonical(address: string | undefined): string | undefined {
  const ip = parse(address);
  if (!ip) return undefined;
  return ip.kind() === 'ipv6' ? (ip as ipaddr.IPv6).toRFC5952String() : ip.toString();
}
