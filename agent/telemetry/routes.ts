import type { RoutingTable } from '../../domain/telemetry/reports.js';

export type ObservedRoute = RoutingTable['routes'][number];

/** One route of `birdc show route all`: its head line and its attribute lines. */
export interface BirdRoute {
  prefix: string;
  protocol: string;
  /** BIRD's best route of the prefix (`*`). */
  best: boolean;
  /** The route's kind word: `unicast`, `unreachable`, `blackhole`, ... */
  kind: string;
  /** When BIRD last changed the route, as printed: `16:02:52.547` (today), `2026-11-21` (older), `2026-11-22 16:02:52` (iso long). */
  stamp: string;
  /** The indented attribute lines (`Type: BGP univ`, `BGP.as_path: ...`), without the tab. */
  attributes: string[];
}

/** `172.20.1.0/24        unreachable [peer_a 16:02:52.547 from 127.0.0.1] * (100) [AS4242420077i]`, or an alternative route of the same prefix (no prefix, indented). */
const ROUTE = /^(\S+)?\s+(\S+)\s+\[(\S+)(?:\s+([^\]]*?))?(?:\s+from\s+[^\]\s]+)?\](\s+\*)?/;
const PREFIX = /^[0-9A-Fa-f.:]+\/\d{1,3}$/;

/**
 * Parses `birdc show route all` (BIRD 2, every table shown) into every route,
 * best or not, with its attribute lines. Lines of other tables (ROA, flow) and
 * anything else that is no IP route are skipped. Pure.
 */
export function parseBirdRouteList(text: string): BirdRoute[] {
  const routes: BirdRoute[] = [];
  let prefix: string | null = null;
  let current: BirdRoute | null = null;
  for (const line of text.split('\n')) {
    if (line.startsWith('\t')) {
      current?.attributes.push(line.slice(1));
      continue;
    }
    const m = ROUTE.exec(line);
    if (!m) {
      current = null;
      continue;
    }
    if (m[1] !== undefined) prefix = PREFIX.test(m[1]) ? m[1] : null;
    current = prefix ? { prefix, protocol: m[3].slice(0, 128), best: m[5] !== undefined, kind: m[2], stamp: m[4] ?? '', attributes: [] } : null;
    if (current) routes.push(current);
  }
  return routes;
}

/** The AS path of a route (`BGP.as_path`; AS sets left out), empty when it has none (static, OSPF, own prefixes over iBGP). */
export function asPathOf(route: BirdRoute): number[] {
  const line = route.attributes.find((a) => a.startsWith('BGP.as_path:'));
  if (!line) return [];
  return line
    .slice('BGP.as_path:'.length)
    .split(/\s+/)
    .filter((h) => /^\d+$/.test(h))
    .map(Number)
    .filter((n) => n >= 1 && n <= 4294967295);
}

/** Whether BIRD learnt the route over BGP (`Type: BGP ...`). */
export const isBgpRoute = (route: BirdRoute): boolean => route.attributes.some((a) => /^Type:\s+BGP\b/.test(a));

/**
 * Parses `birdc show route all` into the best route of each prefix: the
 * protocol that gave it, the AS path, the origin AS (its last hop) and whether
 * this network originated it (no AS path: static, OSPF, or iBGP from a fleet
 * node). RPKI states are added by `rpki.ts` (`rpki` null here). Pure.
 */
export function parseBirdRoutes(text: string): ObservedRoute[] {
  return parseBirdRouteList(text)
    .filter((r) => r.best)
    .map((r) => {
      const hops = asPathOf(r);
      return { prefix: r.prefix, protocol: r.protocol, origin_asn: hops.at(-1) ?? null, as_path: hops.slice(0, 64), rpki: null, local: hops.length === 0 };
    });
}
