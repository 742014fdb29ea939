import { asPathOf, isBgpRoute, type BirdRoute } from '../routes.js';

/** What the flap collector keeps of one BGP route between two observations. */
export interface RouteView {
  prefix: string;
  protocol: string;
  /** First AS-path hop after the local AS; null for own origin (empty path). */
  peer_asn: number | null;
  /** Last hop; null for own origin. */
  origin_asn: number | null;
  /** From the first hop after the local AS to the origin, prepends collapsed (empty for own origin). */
  as_path: number[];
  /** Hash of the kind and the attribute lines (AS path, next hop, communities, ...). */
  attributes: number;
  /** Hash of BIRD's change time of the route. */
  stamp: number;
  /** Whether the printed stamp carries a time of day (a fresh change always does). */
  timed: boolean;
}

/**
 * The BGP routes of one `show route all`, keyed by prefix, protocol and the
 * route's rank among that protocol's routes of the prefix (ADD-PATH can give
 * several). Routes BIRD did not learn over BGP (static, OSPF, device) are local
 * configuration, not flaps, and are left out. Pure.
 */
export function routeViews(routes: readonly BirdRoute[], localAsn: number | null): Map<string, RouteView> {
  const views = new Map<string, RouteView>();
  for (const route of routes) {
    if (!isBgpRoute(route)) continue;
    const hops = attributedPath(asPathOf(route), localAsn);
    let rank = 0;
    while (views.has(viewKey(route, rank))) rank++;
    views.set(viewKey(route, rank), {
      prefix: fresh(route.prefix),
      protocol: fresh(route.protocol),
      peer_asn: hops[0] ?? null,
      origin_asn: hops.at(-1) ?? null,
      as_path: collapsePrepends(hops),
      attributes: hash53(`${route.kind}\n${route.attributes.join('\n')}`),
      stamp: hash53(route.stamp),
      timed: /\d{2}:\d{2}:\d{2}/.test(route.stamp),
    });
  }
  return views;
}

/** The path without leading hops of the local AS (a path that starts there, e.g. on a collector session), so the first hop is where the route entered. */
export function attributedPath(hops: number[], localAsn: number | null): number[] {
  let i = 0;
  while (localAsn !== null && i < hops.length && hops[i] === localAsn) i++;
  return hops.slice(i);
}

/** One hop per run of repeats: `[1, 1, 2, 2, 2, 3]` is `[1, 2, 3]` (a prepend is one AS, not several hops). */
export function collapsePrepends(hops: readonly number[]): number[] {
  return hops.filter((asn, i) => i === 0 || hops[i - 1] !== asn);
}

const viewKey = (route: BirdRoute, rank: number) => `${route.prefix}\t${route.protocol}\t${rank}`;

/** A copy that does not keep the whole `birdc` output alive (V8 slices point into their parent string). */
const fresh = (text: string): string => Buffer.from(text, 'utf8').toString('utf8');

/** cyrb53: a fast 53-bit string hash; a collision only hides one change. */
export function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
