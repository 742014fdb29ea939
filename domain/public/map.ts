import { byString, isActive, isOnline, undirectedPairs, type NodeFacts } from './facts.js';
import { placementOf, type Geo } from './geo.js';

/**
 * `GET /public/map` (document 2): the anonymous world map. Points are cities,
 * not nodes: node ids, addresses, endpoints, agent versions and health details
 * never appear. Every field is built here from scratch, so nothing the facts
 * carry can slip through.
 */
export interface PublicMap {
  asn: number | null;
  updated_at: string;
  stats: { nodes_online: number; bgp_sessions: number; routes: number };
  nodes: MapPoint[];
  links: [string, string][];
}

export interface MapPoint {
  label: string;
  lat: number;
  lon: number;
  city: string;
  country: string;
  region: number | null;
  online: boolean;
  sessions: number;
}

/**
 * Builds the map at `generatedAt`. Decommissioned nodes are left out; a node
 * whose site names no known city counts in `stats` but has no point and no link.
 * Sessions count only for online nodes (a stale node's last snapshot is old news).
 */
export function buildPublicMap(facts: readonly NodeFacts[], generatedAt: Date): PublicMap {
  const active = facts.filter(isActive).sort((a, b) => byString(a.node_id, b.node_id));
  const sessionsOf = (f: NodeFacts) => (isOnline(f) ? f.bgp_established : 0);
  return {
    asn: fleetAsn(facts),
    updated_at: generatedAt.toISOString(),
    stats: {
      nodes_online: active.filter(isOnline).length,
      bgp_sessions: active.reduce((sum, f) => sum + sessionsOf(f), 0),
      routes: median(active.flatMap((f) => (f.table_size === null ? [] : [f.table_size]))),
    },
    nodes: points(active, sessionsOf),
    links: cityLinks(active),
  };
}

/** Same-city nodes fold into one point: online if any is, sessions summed, the region of the first node by node id (its own, else the city's). */
function points(active: readonly NodeFacts[], sessionsOf: (f: NodeFacts) => number): MapPoint[] {
  const byLabel = new Map<string, { geo: Geo; online: boolean; sessions: number }>();
  for (const f of active) {
    const { code, geo } = placementOf(f.site, f.labels);
    if (!code || !geo) continue;
    const point = byLabel.get(code);
    if (point) {
      point.online ||= isOnline(f);
      point.sessions += sessionsOf(f);
    } else {
      byLabel.set(code, { geo, online: isOnline(f), sessions: sessionsOf(f) });
    }
  }
  return [...byLabel.entries()]
    .sort(([a], [b]) => byString(a, b))
    .map(([label, p]) => ({
      label,
      lat: p.geo.lat,
      lon: p.geo.lon,
      city: p.geo.city,
      country: p.geo.country,
      region: p.geo.region,
      online: p.online,
      sessions: p.sessions,
    }));
}

/** WireGuard adjacencies between placed active nodes, as pairs of city labels. */
function cityLinks(active: readonly NodeFacts[]): [string, string][] {
  const labelOf = new Map(active.map((f) => [f.node_id, placementOf(f.site, f.labels).code]));
  const pairs: [string, string][] = [];
  for (const f of active) {
    const from = labelOf.get(f.node_id);
    for (const adj of f.adjacencies) {
      const to = labelOf.get(adj.node_id);
      if (from && to) pairs.push([from, to]);
    }
  }
  return undirectedPairs(pairs);
}

/** The AS the fleet's node records carry (the most common one, the lowest on a tie); null without nodes. */
export function fleetAsn(facts: readonly Pick<NodeFacts, 'asn'>[]): number | null {
  const counts = new Map<number, number>();
  for (const f of facts) counts.set(f.asn, (counts.get(f.asn) ?? 0) + 1);
  let best: number | null = null;
  for (const [asn, n] of counts) {
    if (best === null || n > counts.get(best)! || (n === counts.get(best)! && asn < best)) best = asn;
  }
  return best;
}

/** Median, rounded to a whole number (the mean of the middle two for an even count); 0 for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : Math.round((sorted[mid - 1] + sorted[mid]) / 2);
}
