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
    rpki: observed
      ? { valid: rpki[4].valid + rpki[6].valid, invalid: rpki[4].invalid + rpki[6].invalid, not_found: rpki[4].not_found + rpki[6].not_found }
      : null,
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
 * such rows sort after the others by their text. Hand-rolled over char codes
 * because a table holds up to 20,000 routes (ipaddr.js costs ~45 µs per IPv6
 * address, a regex per group still ~5 µs).
 */
export function prefixSortKey(prefix: string): string | null {
  const slash = prefix.indexOf('/');
  const length = prefixLength(prefix);
  const words = familyOf(prefix) === 4 ? ipv4Words(prefix, slash) : ipv6Words(prefix, slash);
  if (words === null || !Number.isInteger(length) || length > words.length * 16) return null;
  let key = '';
  for (const w of words) key += HEX4[w];
  return `${key}/${String(length).padStart(3, '0')}`;
}

/** Four-digit lower-case hex of every 16-bit value. */
const HEX4 = Array.from({ length: 65536 }, (_, i) => i.toString(16).padStart(4, '0'));

/** The address as 16-bit words, or null. */
function ipv4Words(s: string, end: number): number[] | null {
  const octets: number[] = [];
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= end; i++) {
    const c = i === end ? 46 : s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || value > 255) return null;
      octets.push(value);
      value = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57 && digits < 3) {
      value = value * 10 + (c - 48);
      digits += 1;
    } else return null;
  }
  return octets.length === 4 ? [octets[0] * 256 + octets[1], octets[2] * 256 + octets[3]] : null;
}

function ipv6Words(s: string, end: number): number[] | null {
  const text = s.slice(0, end);
  const gap = text.indexOf('::');
  if (gap !== text.lastIndexOf('::')) return null;
  const head = hexGroups(gap < 0 ? text : text.slice(0, gap));
  const tail = gap < 0 ? [] : hexGroups(text.slice(gap + 2));
  if (head === null || tail === null) return null;
  const given = head.length + tail.length;
  if (gap < 0 ? given !== 8 : given > 7) return null;
  return [...head, ...Array<number>(8 - given).fill(0), ...tail];
}

/** Colon-separated groups of 1 to 4 hex digits ('' is none), or null. */
function hexGroups(part: string): number[] | null {
  if (part === '') return [];
  const groups: number[] = [];
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= part.length; i++) {
    const c = i === part.length ? 58 : part.charCodeAt(i);
    const hex = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (c === 58) {
      if (digits === 0) return null;
      groups.push(value);
      value = 0;
      digits = 0;
    } else if (hex >= 0 && digits < 4) {
      value = value * 16 + hex;
      digits += 1;
    } else return null;
  }
  return groups;
}
