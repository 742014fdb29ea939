import type { RoutingTable } from './reports.js';

/**
 * What a routing table says at a glance, computed once when the table arrives
 * (pure, so the server stores it with the observation and reads it back as is).
 */

export type Route = RoutingTable['routes'][number];
export type Family = 4 | 6;
export const RPKI_STATES = ['valid', 'invalid', 'not_found'] as const;
export type RpkiState = (typeof RPKI_STATES)[number];
export type RpkiCounts = Record<RpkiState, number>;

export interface LengthCount {
  length: number;
  count: number;
}

export interface RoutingSummary {
  size: number;
  size_v4: number;
  size_v6: number;
  /** Routes originated by this network, and those learnt from peers. */
  local: number;
  external: number;
  /** Distinct origin ASNs (routes without an origin are not counted). */
  as_count: number;
  as_count_v4: number;
  as_count_v6: number;
  /** Three-state distribution; null when the table has `rpki_observed` false. Routes without a state are not counted. */
  rpki: RpkiCounts | null;
  rpki_v4: RpkiCounts | null;
  rpki_v6: RpkiCounts | null;
  /** Prefix lengths per family, ascending by length; lengths without routes are left out. */
  prefix_lengths: { v4: LengthCount[]; v6: LengthCount[] };
  /** AS-path lengths as reported (prepends count), ascending. */
  as_path_lengths: LengthCount[];
}

/** IPv6 prefixes contain a colon; the report schema allows nothing else with one. */
export const familyOf = (prefix: string): Family => (prefix.includes(':') ? 6 : 4);

export const prefixLength = (prefix: string): number => Number(prefix.slice(prefix.indexOf('/') + 1));

const zeroRpki = (): RpkiCounts => ({ valid: 0, invalid: 0, not_found: 0 });

function histogram(values: Iterable<number>): LengthCount[] {
  const counts = new Map<number, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => a[0] - b[0]).map(([length, count]) => ({ length, count }));
}

export function summarizeRoutes(table: Pick<RoutingTable, 'routes' | 'rpki_observed'>): RoutingSummary {
  const origins = { 4: new Set<number>(), 6: new Set<number>() };
  const rpki = { 4: zeroRpki(), 6: zeroRpki() };
  const lengths: Record<Family, number[]> = { 4: [], 6: [] };
  let local = 0;
  for (const route of table.routes) {
    const family = familyOf(route.prefix);
    lengths[family].push(prefixLength(route.prefix));
    if (route.origin_asn !== null) origins[family].add(route.origin_asn);
    if (route.rpki !== null) rpki[family][route.rpki] += 1;
    if (route.local) local += 1;
  }
  const observed = table.rpki_observed;
  return {
    size: table.routes.length,
    size_v4: lengths[4].length,
    size_v6: lengths[6].length,
    local,
    external: table.routes.length - local,
    as_count: new Set([...origins[4], ...origins[6]]).size,
    as_count_v4: origins[4].size,
    as_count_v6: origins[6].size,
    rpki: observed ? { valid: rpki[4].valid + rpki[6].valid, invalid: rpki[4].invalid + rpki[6].invalid, not_found: rpki[4].not_found + rpki[6].not_found } : null,
    rpki_v4: observed ? rpki[4] : null,
    rpki_v6: observed ? rpki[6] : null,
    prefix_lengths: { v4: histogram(lengths[4]), v6: histogram(lengths[6]) },
    as_path_lengths: histogram(table.routes.map((r) => r.as_path.length)),
  };
}

/**
 * A sort key that orders prefixes by address then length: fixed-width hex of the
 * address (8 digits for IPv4, 32 for IPv6) and the length. Null when the text is
 * not an address the key understands (the report schema checks only characters);
 * such rows sort after the others by their text. Hand-rolled because ipaddr.js
 * costs ~45 µs per IPv6 address and a table holds up to 20,000 routes.
 */
export function prefixSortKey(prefix: string): string | null {
  const slash = prefix.indexOf('/');
  const address = prefix.slice(0, slash);
  const length = prefixLength(prefix);
  const hex = familyOf(prefix) === 4 ? ipv4Hex(address) : ipv6Hex(address);
  if (hex === null || !Number.isInteger(length) || length > (hex.length === 8 ? 32 : 128)) return null;
  return `${hex}/${String(length).padStart(3, '0')}`;
}

function ipv4Hex(address: string): string | null {
  const parts = address.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.map((p) => Number(p).toString(16).padStart(2, '0')).join('');
}

function ipv6Hex(address: string): string | null {
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const groups = halves.map((h) => (h === '' ? [] : h.split(':')));
  const given = groups.reduce((n, g) => n + g.length, 0);
  if (groups.flat().some((g) => !/^[0-9A-Fa-f]{1,4}$/.test(g))) return null;
  if (halves.length === 1 ? given !== 8 : given > 7) return null;
  const middle = halves.length === 2 ? Array<string>(8 - given).fill('0') : [];
  return [...groups[0], ...middle, ...(groups[1] ?? [])].map((g) => g.toLowerCase().padStart(4, '0')).join('');
}
