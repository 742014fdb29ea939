import ipaddr from 'ipaddr.js';
import { parseIp, type Ip } from '../net/ip.js';

/**
 * Where a probe may point: dn42, private and link-local addresses only, so the
 * fleet cannot be used to ping the public internet. The dn42 ranges are those of
 * the import filters (reference: desired-state-and-rendering.md); the private and
 * link-local ones are RFC 1918, RFC 4193 (ULA), RFC 3927 and RFC 4291. Several
 * overlap (dn42 172.20.0.0/14 lies in RFC 1918 172.16.0.0/12); each is listed
 * under the name an operator looks for.
 */
export const PROBE_TARGET_RANGES: readonly { cidr: string; kind: 'dn42' | 'private' | 'link-local' }[] = [
  { cidr: '172.20.0.0/14', kind: 'dn42' },
  { cidr: '172.31.0.0/16', kind: 'dn42' },
  { cidr: '10.100.0.0/14', kind: 'dn42' },
  { cidr: '10.127.0.0/16', kind: 'dn42' },
  { cidr: 'fd00::/8', kind: 'dn42' },
  { cidr: '10.0.0.0/8', kind: 'private' },
  { cidr: '172.16.0.0/12', kind: 'private' },
  { cidr: '192.168.0.0/16', kind: 'private' },
  { cidr: 'fc00::/7', kind: 'private' },
  { cidr: '169.254.0.0/16', kind: 'link-local' },
  { cidr: 'fe80::/10', kind: 'link-local' },
];

const PARSED = PROBE_TARGET_RANGES.map((r) => ({ ...r, range: ipaddr.parseCIDR(r.cidr) }));

export type TargetCheck = { ok: true; ip: Ip; kind: 'dn42' | 'private' | 'link-local' } | { ok: false; reason: string };

/** A plain IP literal (no host names, no legacy IPv4 forms, no `%zone`) inside one of the ranges. */
export function checkProbeTarget(text: string): TargetCheck {
  const ip = parseIp(text);
  if (!ip) return { ok: false, reason: 'not an IP address literal' };
  const hit = PARSED.find((r) => r.range[0].kind() === ip.kind() && ip.match(r.range));
  if (!hit) return { ok: false, reason: 'outside the dn42, private and link-local ranges' };
  return { ok: true, ip, kind: hit.kind };
}
