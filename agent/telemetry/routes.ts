import type { RoutingTable } from '../../domain/telemetry/reports.js';

export type ObservedRoute = RoutingTable['routes'][number];

/** `172.20.1.0/24        unicast [peer_a 16:02:52.547 from 127.0.0.1] * (100) [AS4242420077i]`, or an alternative route of the same prefix (no prefix, indented). */
const ROUTE = /^(\S+)?\s+\S+\s+\[(\S+)[^\]]*\](\s+\*)?/;
const PREFIX = /^[0-9A-Fa-f.:]+\/\d{1,3}$/;

/**
 * Parses `birdc show route all` (BIRD 2, every table) into the best route of
 * each prefix: the protocol that gave it, the AS path (`BGP.as_path`, AS sets
 * left out), the origin AS (its last hop) and whether this network originated
 * it (no AS path: static, OSPF, or iBGP from a fleet node). RPKI validity is not
 * read (`rpki` null; the report says `rpki_observed: false`). Pure.
 */
export function parseBirdRoutes(text: string): ObservedRoute[] {
  const routes: ObservedRoute[] = [];
  let prefix: string | null = null;
  let current: ObservedRoute | null = null;
  for (const line of text.split('\n')) {
    if (line.startsWith('\t')) {
      const path = /^\tBGP\.as_path:\s*(.*)$/.exec(line);
      if (path && current) setPath(current, path[1]);
      continue;
    }
    const m = ROUTE.exec(line);
    if (!m) {
      current = null;
      continue;
    }
    if (m[1] !== undefined) prefix = PREFIX.test(m[1]) ? m[1] : null;
    current = prefix && m[3] ? { prefix, protocol: m[2].slice(0, 128), origin_asn: null, as_path: [], rpki: null, local: true } : null;
    if (current) routes.push(current);
  }
  return routes;
}

function setPath(route: ObservedRoute, text: string): void {
  const hops = text.split(/\s+/).filter((h) => /^\d+$/.test(h)).map(Number).filter((n) => n >= 1 && n <= 4294967295);
  route.as_path = hops.slice(0, 64);
  route.origin_asn = hops.at(-1) ?? null;
  route.local = hops.length === 0;
}
