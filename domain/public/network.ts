import { byString, undirectedPairs } from './facts.js';
import type { PublicFleet } from './fleet-overview.js';
import type { PublicMap } from './map.js';

/**
 * What the map and the list of locations show, whichever layer it came from:
 * points of presence folded by city and the links between them. The baked
 * snapshot and the refresh come from `/public/map` (already folded, with
 * session counts), the map component from `/public/fleet` (one row per node,
 * folded here, with node counts). Pure: used by the bake (Node) and the page.
 */
export interface Network {
  /** Which layer drew it: `snapshot` (baked), `map` (refresh), `fleet` (the map component). */
  source: NetworkSource;
  places: Place[];
  /** Pairs of place keys, `a < b`, deduplicated, sorted. */
  links: [string, string][];
}

export type NetworkSource = 'snapshot' | 'map' | 'fleet';

/** The layers in the order they fall back: a later one is never replaced by an earlier one. */
export const LAYER_ORDER: readonly NetworkSource[] = ['snapshot', 'map', 'fleet'];

export interface Place {
  /** The city code (`FRA`), or `city, country` when the fleet row names no known code. */
  key: string;
  city: string;
  country: string;
  lat: number;
  lon: number;
  online: boolean;
  /** Established BGP sessions (map layers); null from the fleet. */
  sessions: number | null;
  /** Node ids at this place (fleet layer); empty from the map, which never names nodes. */
  nodes: string[];
}

/** `/public/map` as a network: its points are already cities. Links to a point the map does not list are dropped. */
export function networkOfMap(map: Pick<PublicMap, 'nodes' | 'links'>, source: 'snapshot' | 'map'): Network {
  const places = map.nodes.map((p): Place => ({
    key: p.label,
    city: p.city,
    country: p.country,
    lat: p.lat,
    lon: p.lon,
    online: p.online,
    sessions: p.sessions,
    nodes: [],
  }));
  const known = new Set(places.map((p) => p.key));
  return { source, places, links: undirectedPairs(map.links.filter(([a, b]) => known.has(a) && known.has(b))) };
}

/** A fleet row's city code: its site upper-cased without a trailing instance number (`fra1` → `FRA`), as the map labels it. */
function codeOf(site: string | null): string | null {
  if (!site) return null;
  const code = site
    .trim()
    .toUpperCase()
    .replace(/[-_.]?\d+$/, '');
  return /^[A-Z]{3}$/.test(code) ? code : null;
}

/**
 * `/public/fleet` as a network: nodes without geo are left out, nodes of one
 * city fold into one place (online if any node is `ok` or `degraded`, as the
 * public map counts them), node links become links between places.
 */
export function networkOfFleet(fleet: Pick<PublicFleet, 'nodes' | 'links'>): Network {
  const byKey = new Map<string, Place>();
  const placeOf = new Map<string, string>();
  for (const row of [...fleet.nodes].sort((a, b) => byString(a.node_id, b.node_id))) {
    if (!row.geo) continue;
    const key = codeOf(row.site) ?? `${row.geo.city}, ${row.geo.country}`;
    const online = row.health === 'ok' || row.health === 'degraded';
    const place = byKey.get(key);
    if (place) {
      place.online ||= online;
      place.nodes.push(row.node_id);
    } else {
      byKey.set(key, { key, city: row.geo.city, country: row.geo.country, lat: row.geo.lat, lon: row.geo.lon, online, sessions: null, nodes: [row.node_id] });
    }
    placeOf.set(row.node_id, key);
  }
  const links = fleet.links.flatMap(({ a, b }) => {
    const pa = placeOf.get(a);
    const pb = placeOf.get(b);
    return pa && pb ? [[pa, pb] as const] : [];
  });
  return { source: 'fleet', places: [...byKey.values()].sort((p, q) => byString(p.key, q.key)), links: undirectedPairs(links) };
}

/** Whether a layer may replace what is on screen: only a layer as rich or richer (a refresh of the same layer does). */
export function mayReplace(current: NetworkSource, next: NetworkSource): boolean {
  return LAYER_ORDER.indexOf(next) >= LAYER_ORDER.indexOf(current);
}

/** Is this a `/public/map` document? Checked before a layer uses it, so a proxy's error page never draws. */
export function isPublicMap(value: unknown): value is PublicMap {
  const v = value as PublicMap;
  return (
    typeof v === 'object' &&
    v !== null &&
    (v.asn === null || typeof v.asn === 'number') &&
    typeof v.updated_at === 'string' &&
    typeof v.stats === 'object' &&
    v.stats !== null &&
    ['nodes_online', 'bgp_sessions', 'routes'].every((k) => typeof (v.stats as unknown as Record<string, unknown>)[k] === 'number') &&
    Array.isArray(v.nodes) &&
    v.nodes.every(
      (p) =>
        typeof p?.label === 'string' &&
        typeof p.city === 'string' &&
        typeof p.country === 'string' &&
        Number.isFinite(p.lat) &&
        Number.isFinite(p.lon) &&
        typeof p.online === 'boolean' &&
        typeof p.sessions === 'number',
    ) &&
    Array.isArray(v.links) &&
    v.links.every((l) => Array.isArray(l) && l.length === 2 && typeof l[0] === 'string' && typeof l[1] === 'string')
  );
}

/** Is this a `/public/fleet` document (the fields the map component reads)? */
export function isPublicFleet(value: unknown): value is PublicFleet {
  const v = value as PublicFleet;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.generated_at === 'string' &&
    Array.isArray(v.nodes) &&
    v.nodes.every(
      (n) =>
        typeof n?.node_id === 'string' &&
        (n.site === null || typeof n.site === 'string') &&
        typeof n.health === 'string' &&
        (n.geo === null ||
          (typeof n.geo === 'object' &&
            Number.isFinite(n.geo.lat) &&
            Number.isFinite(n.geo.lon) &&
            typeof n.geo.city === 'string' &&
            typeof n.geo.country === 'string')),
    ) &&
    Array.isArray(v.links) &&
    v.links.every((l) => typeof l?.a === 'string' && typeof l.b === 'string')
  );
}
