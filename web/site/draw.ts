import { geoNaturalEarth1, geoPath, type GeoProjection } from 'd3-geo';
import type { Feature, FeatureCollection, Geometry, MultiPoint } from 'geojson';
import type { Network, Place } from '../../domain/public/network.js';

/**
 * The map as SVG markup, the same string in the bake (Node) and in the page:
 * land, great-circle links, one marker per place and the labels that fit. The
 * view frames the points of presence (the whole world when there are none), so
 * a network in one region fills the map instead of sitting in a corner of it.
 * Markup only: sizes a phone needs are set by the style sheet.
 */
export const MAP_WIDTH = 960;
export const MAP_HEIGHT = 500;

export type Land = FeatureCollection<Geometry> | Feature<Geometry>;

/** Text for HTML text and attribute values. */
export function esc(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Longitude and latitude range shown: the places with a margin, at least a region wide, at most the world. */
export interface Frame {
  west: number;
  east: number;
  south: number;
  north: number;
}

const WORLD: Frame = { west: -180, east: 180, south: -56, north: 80 };
const MIN_LON_SPAN = 50;
const MIN_LAT_SPAN = 26;

export function frameOf(places: readonly Pick<Place, 'lat' | 'lon'>[]): Frame {
  if (places.length === 0) return WORLD;
  const lons = places.map((p) => p.lon);
  const lats = places.map((p) => p.lat);
  const grow = (lo: number, hi: number, min: number, margin: number): [number, number] => {
    const pad = Math.max((min - (hi - lo)) / 2, 0) + margin + (hi - lo) * 0.15;
    return [lo - pad, hi + pad];
  };
  let [west, east] = grow(Math.min(...lons), Math.max(...lons), MIN_LON_SPAN, 6);
  let [south, north] = grow(Math.min(...lats), Math.max(...lats), MIN_LAT_SPAN, 4);
  if (east - west >= 300) [west, east] = [WORLD.west, WORLD.east];
  // Keep the frame on the map: slide it back inside the world's latitudes rather than cut it.
  if (north > WORLD.north) [south, north] = [south - (north - WORLD.north), WORLD.north];
  if (south < WORLD.south) [south, north] = [WORLD.south, Math.min(north + (WORLD.south - south), WORLD.north)];
  return { west, east, south: Math.max(south, WORLD.south), north };
}

/** Natural Earth projection centred on the frame and fitted to it (the frame's outline, sampled, so curved edges count). */
export function projectionFor(frame: Frame): GeoProjection {
  const outline: [number, number][] = [];
  for (let i = 0; i <= 16; i++) {
    const lon = frame.west + ((frame.east - frame.west) * i) / 16;
    const lat = frame.south + ((frame.north - frame.south) * i) / 16;
    outline.push([lon, frame.south], [lon, frame.north], [frame.west, lat], [frame.east, lat]);
  }
  const centre = (frame.west + frame.east) / 2;
  const pad = 16;
  return geoNaturalEarth1()
    .rotate([-centre, 0])
    .fitExtent(
      [
        [pad, pad],
        [MAP_WIDTH - pad, MAP_HEIGHT - pad],
      ],
      { type: 'MultiPoint', coordinates: outline } satisfies MultiPoint,
    )
    .clipExtent([
      [0, 0],
      [MAP_WIDTH, MAP_HEIGHT],
    ]);
}

interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

const LABEL_SIZE = 14;
const overlaps = (a: Box, b: Box) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;

/** Where each place's label goes: right, left, above or below its marker, the first spot that hits no other label or marker; none fits: no label (the list names it). */
export function placeLabels(
  points: readonly { key: string; x: number; y: number; text: string }[],
): Map<string, { x: number; y: number; anchor: 'start' | 'end' | 'middle' }> {
  const markers: (Box & { key: string })[] = points.map((p) => ({ key: p.key, x0: p.x - 7, y0: p.y - 7, x1: p.x + 7, y1: p.y + 7 }));
  const taken: Box[] = [];
  const placed = new Map<string, { x: number; y: number; anchor: 'start' | 'end' | 'middle' }>();
  for (const p of points) {
    const w = p.text.length * LABEL_SIZE * 0.58;
    const h = LABEL_SIZE;
    const spots = [
      { x: p.x + 10, y: p.y + 5, anchor: 'start' as const, box: { x0: p.x + 9, y0: p.y - h / 2, x1: p.x + 11 + w, y1: p.y + h / 2 } },
      { x: p.x - 10, y: p.y + 5, anchor: 'end' as const, box: { x0: p.x - 11 - w, y0: p.y - h / 2, x1: p.x - 9, y1: p.y + h / 2 } },
      { x: p.x, y: p.y - 11, anchor: 'middle' as const, box: { x0: p.x - w / 2, y0: p.y - 10 - h, x1: p.x + w / 2, y1: p.y - 9 } },
      { x: p.x, y: p.y + 22, anchor: 'middle' as const, box: { x0: p.x - w / 2, y0: p.y + 9, x1: p.x + w / 2, y1: p.y + 10 + h } },
    ];
    const spot = spots.find(
      ({ box }) =>
        box.x0 >= 2 &&
        box.x1 <= MAP_WIDTH - 2 &&
        box.y0 >= 2 &&
        box.y1 <= MAP_HEIGHT - 2 &&
        !taken.some((t) => overlaps(t, box)) &&
        !markers.some((m) => m.key !== p.key && overlaps(m, box)),
    );
    if (!spot) continue;
    taken.push(spot.box);
    placed.set(p.key, { x: spot.x, y: spot.y, anchor: spot.anchor });
  }
  return placed;
}

const round = (x: number) => Math.round(x * 10) / 10;

/** One sentence for screen readers and the SVG's label. */
export function mapSummary(network: Network): string {
  const n = network.places.length;
  if (n === 0) return 'World map. Our points of presence appear here as they come online.';
  const online = network.places.filter((p) => p.online).length;
  return `World map of our ${n} point${n === 1 ? '' : 's'} of presence (${online} online) and the ${network.links.length} link${network.links.length === 1 ? '' : 's'} between them; the list of locations follows.`;
}

/** The whole map as one `<svg>` element. */
export function mapSvg(network: Network, land: Land | null): string {
  const projection = projectionFor(frameOf(network.places));
  const path = geoPath(projection).digits(1);
  const at = new Map(
    network.places.flatMap((p) => {
      const xy = projection([p.lon, p.lat]);
      return xy && Number.isFinite(xy[0]) ? [[p.key, { place: p, x: round(xy[0]), y: round(xy[1]) }] as const] : [];
    }),
  );
  const landPath = land ? (path(land) ?? '') : '';
  const links = network.links.flatMap(([a, b]) => {
    const pa = at.get(a)?.place;
    const pb = at.get(b)?.place;
    if (!pa || !pb) return [];
    const d = path({
      type: 'LineString',
      coordinates: [
        [pa.lon, pa.lat],
        [pb.lon, pb.lat],
      ],
    });
    const up = pa.online && pb.online ? ' up' : '';
    return d ? [`<path class="link${up}" data-a="${esc(a)}" data-b="${esc(b)}" d="${d}"/>`] : [];
  });
  // Online places first, then by sessions and nodes: the busiest get a label first.
  const ranked = [...at.values()].sort(
    (p, q) => Number(q.place.online) - Number(p.place.online) || weight(q.place) - weight(p.place) || (p.place.key < q.place.key ? -1 : 1),
  );
  const labels = placeLabels(ranked.map((p) => ({ key: p.place.key, x: p.x, y: p.y, text: p.place.city })));
  const markers = ranked
    .reverse()
    .map(
      ({ place, x, y }) =>
        `<g class="place${place.online ? ' online' : ''}" data-key="${esc(place.key)}" transform="translate(${x} ${y})"><g class="marker"><circle class="halo" r="10"/><circle class="dot" r="5"/></g></g>`,
    );
  const texts = [...labels].map(([key, l]) => `<text x="${round(l.x)}" y="${round(l.y)}" text-anchor="${l.anchor}">${esc(at.get(key)!.place.city)}</text>`);
  return [
    `<svg class="map-svg" viewBox="0 0 ${MAP_WIDTH} ${MAP_HEIGHT}" role="img" aria-label="${esc(mapSummary(network))}" data-source="${network.source}" data-places="${network.places.length}" data-links="${links.length}">`,
    `<rect class="sea" width="${MAP_WIDTH}" height="${MAP_HEIGHT}"/>`,
    landPath ? `<path class="land" d="${landPath}"/>` : '',
    `<g class="links">${links.join('')}</g>`,
    `<g class="places">${markers.join('')}</g>`,
    `<g class="labels">${texts.join('')}</g>`,
    '</svg>',
  ].join('');
}

const weight = (p: Place) => (p.sessions ?? 0) + p.nodes.length;

const regionNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'code' });

/** `Germany`, or the code when the runtime does not know it. */
export function countryName(code: string): string {
  try {
    return regionNames.of(code) ?? code;
  } catch {
    return code;
  }
}

/**
 * The text alternative of the map: one list item per place, in the map's order
 * (by key), with what the layer knows of it (sessions from the map, node links
 * to the operator console from the fleet).
 */
export function placesList(network: Network): string {
  if (network.places.length === 0) return '<li class="empty">Our points of presence are listed here as they come online.</li>';
  return network.places
    .map((p) => {
      const facts: string[] = [p.online ? 'online' : 'offline'];
      if (p.sessions !== null) facts.push(`${p.sessions} BGP session${p.sessions === 1 ? '' : 's'}`);
      if (p.nodes.length) facts.push(`${p.nodes.length} node${p.nodes.length === 1 ? '' : 's'}`);
      const nodes = p.nodes.length
        ? ` <span class="nodes">${p.nodes.map((id) => `<a href="/nodes/${encodeURIComponent(id)}">${esc(id)}</a>`).join(' ')}</span>`
        : '';
      return `<li data-key="${esc(p.key)}" class="${p.online ? 'online' : 'offline'}"><span class="where"><span class="dot" aria-hidden="true"></span>${esc(p.city)}, ${esc(countryName(p.country))}</span> <span class="facts">${facts.join(' · ')}</span>${nodes}</li>`;
    })
    .join('');
}
