import type { DnsState } from '../../../domain/desired-state/schema.js';
import { parseIp } from '../../../domain/net/ip.js';
import { quoted, renderedPath, safeComment } from '../text.js';
import { zonePath } from './names.js';

/**
 * `dns/named.conf`: a complete BIND 9 configuration (it replaces Debian's
 * `/etc/bind/named.conf`, so it holds the one `options` block), for the node's
 * share of its DNS group: a caching resolver for dn42 clients with the group's
 * forward zones, and the group's zones as primary.
 *
 * - listen-on / listen-on-v6: the group's bind addresses by family; a family
 *   without one is `none`; no bind address at all keeps BIND's default (all).
 * - recursion for `dn42-clients`: localhost, connected networks and the dn42
 *   ranges (10/8, 172.20/14, 172.31/16, fd00::/8). An anycast resolver serves
 *   whoever reaches it inside dn42.
 * - max-cache-ttl = `cache_ttl_seconds`.
 * - DNSSEC validation stays on for the Internet, except under the forward
 *   zones: dn42's TLDs do not exist in the public root, whose signed denial
 *   would make every forwarded answer bogus.
 * - no automatic empty zones: they would answer the RFC 1918 reverse zones
 *   dn42 uses (10.in-addr.arpa, 20.172.in-addr.arpa …) with NXDOMAIN.
 * - zones: `type primary`, `notify no` (every member of the anycast set is
 *   primary with the same data; there is no secondary to tell).
 */

export const DNS_CLIENT_RANGES: readonly string[] = ['10.0.0.0/8', '172.20.0.0/14', '172.31.0.0/16', 'fd00::/8'];
/** Debian's working directory for named (managed keys, cache dumps). */
export const NAMED_DIRECTORY = '/var/cache/bind';

const list = (items: readonly string[]) => `{ ${items.map((i) => `${i};`).join(' ')} }`;

function listenLines(addresses: readonly string[]): string[] {
  if (addresses.length === 0) return [];
  const v4 = addresses.filter((a) => parseIp(a)?.kind() === 'ipv4');
  const v6 = addresses.filter((a) => parseIp(a)?.kind() === 'ipv6');
  return [`listen-on ${list(v4.length > 0 ? v4 : ['none'])};`, `listen-on-v6 ${list(v6.length > 0 ? v6 : ['none'])};`];
}

function options(dns: DnsState): string[] {
  const except = dns.forwards.map((f) => quoted(f.zone, 'zone'));
  return [
    'options {',
    `\tdirectory ${quoted(NAMED_DIRECTORY, 'directory')};`,
    ...listenLines(dns.bind_addresses).map((l) => `\t${l}`),
    '\trecursion yes;',
    '\tallow-recursion { dn42-clients; };',
    '\tallow-query-cache { dn42-clients; };',
    `\tmax-cache-ttl ${dns.cache_ttl_seconds};`,
    '\tdnssec-validation auto;',
    ...(except.length > 0 ? [`\tvalidate-except ${list(except)};`] : []),
    '\tempty-zones-enable no;',
    '};',
  ];
}

/** The text of `dns/named.conf`; zone files are read from `<renderedDir>/dns/zones/`. */
export function namedConf(dns: DnsState, nodeId: string, renderedDir: string): string {
  const lines = [
    `// dn42-agent: BIND 9 configuration of node ${safeComment(nodeId)}, DNS group ${safeComment(dns.group_name)} (${dns.group_id}), rendered; the next apply overwrites it.`,
    `acl dn42-clients ${list(['localhost', 'localnets', ...DNS_CLIENT_RANGES])};`,
    '',
    ...options(dns),
    '',
    ...dns.forwards.flatMap((f) => [`zone ${quoted(f.zone, 'zone')} {`, '\ttype forward;', '\tforward only;', `\tforwarders ${list(f.upstreams)};`, '};']),
    ...dns.zones.flatMap((z) => [
      `zone ${quoted(z.zone, 'zone')} {`,
      '\ttype primary;',
      `\tfile ${renderedPath(renderedDir, zonePath(z.zone))};`,
      '\tnotify no;',
      '};',
    ]),
  ];
  return `${lines.join('\n')}\n`;
}
