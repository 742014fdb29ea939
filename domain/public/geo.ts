import { dn42RegionOf } from '../node/region.js';
import { CITIES, cityCodeOf } from './cities.js';

/** Document 3: `{lat, lon, city (English), country (ISO 3166-1 alpha-2), region (number or null)}`. */
export interface Geo {
  lat: number;
  lon: number;
  city: string;
  country: string;
  region: number | null;
}

/** Where a node is: its city code (the map label) and geo, both null when its site names no known city. */
export interface Placement {
  code: string | null;
  geo: Geo | null;
  /** The node's own region, else its city's; null when neither is known. */
  region: number | null;
}

/** Public coordinates carry one decimal (about 10 km): a city, never a building. */
export const oneDecimal = (x: number): number => Math.round(x * 10) / 10;

/** Places a node by its site through the city table; its own region overrides the table's. */
export function placementOf(site: string | null, labels: Record<string, unknown> | null | undefined): Placement {
  const code = cityCodeOf(site);
  const own = dn42RegionOf(labels);
  if (!code) return { code: null, geo: null, region: own };
  const city = CITIES[code];
  const region = own ?? city.region;
  return { code, geo: { lat: oneDecimal(city.lat), lon: oneDecimal(city.lon), city: city.city, country: city.country, region }, region };
}

/** The `geo` of a row that carries a node (document 3: every such row), from the node's site and labels. */
export const nodeGeo = (node: { site: string | null; labels: Record<string, unknown> | null | undefined }): Geo | null =>
  placementOf(node.site, node.labels).geo;
