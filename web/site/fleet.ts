import { mapSvg, placesList, type Land } from './draw.js';
import type { PublicMap } from '../../domain/public/map.js';
import { isPublicFleet, isPublicMap, mayReplace, networkOfFleet, networkOfMap, type Network, type NetworkSource } from '../../domain/public/network.js';

/**
 * `/fleet.js`: the map component and the page's live layers.
 *
 * `<fleet-map fleet-src="…/public/fleet" world-src="/world-land.geojson">` draws
 * the fleet (nodes with geo, links) on the land outline, and redraws it every
 * minute while the page is visible. Whatever it holds before (the baked
 * snapshot) stays until a drawing succeeds; a failed fetch changes nothing.
 * `show(network)` draws a network from elsewhere, unless a richer layer is
 * already on screen. Each drawing fires `fleetmap:drawn` with the network.
 *
 * On the home page (`#network` present) the module also refreshes the figures
 * and the map from `/public/map` every five minutes.
 */

const FLEET_EVERY_MS = 60_000;
const MAP_EVERY_MS = 300_000;
const TIMEOUT_MS = 15_000;

/**
 * GET as JSON. The live layers revalidate (`no-cache`: a 304 when nothing
 * changed): a timer as long as the answer's max-age would otherwise often find
 * the previous answer still fresh in the browser's cache and skip a period.
 */
async function getJson(url: string, cache: RequestCache = 'no-cache'): Promise<unknown> {
  const res = await fetch(url, { credentials: 'omit', cache, signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!res.ok) throw new Error(`${url}: ${res.status}`);
  return res.json();
}

const lands = new Map<string, Promise<Land>>();

/** The land outline of a URL, fetched once per page (a failure is forgotten, so the next drawing asks again). */
function landOf(url: string): Promise<Land> {
  let land = lands.get(url);
  if (!land) {
    land = getJson(url, 'default').then((value) => {
      const v = value as Land;
      if (v?.type !== 'FeatureCollection' && v?.type !== 'Feature') throw new Error(`${url}: not GeoJSON`);
      return v;
    });
    land.catch(() => lands.delete(url));
    lands.set(url, land);
  }
  return land;
}

/** Runs `work` now and every `ms` while the page is visible (hidden tabs ask nothing). */
function every(ms: number, work: () => void): void {
  work();
  setInterval(() => {
    if (document.visibilityState === 'visible') work();
  }, ms);
}

export class FleetMap extends HTMLElement {
  /** The layer on screen: the baked snapshot until a drawing replaces it. */
  source: NetworkSource = 'snapshot';
  network?: Network;
  private started = false;

  connectedCallback(): void {
    const drawn = this.querySelector('svg[data-source]')?.getAttribute('data-source');
    if (drawn === 'map' || drawn === 'fleet') this.source = drawn;
    if (this.started) return;
    this.started = true;
    const fleetSrc = this.getAttribute('fleet-src');
    if (fleetSrc) every(FLEET_EVERY_MS, () => void this.refresh(fleetSrc));
  }

  /** Fetches the fleet and draws it; any failure leaves the map as it is. */
  async refresh(fleetSrc: string): Promise<boolean> {
    try {
      const fleet = await getJson(fleetSrc);
      if (!isPublicFleet(fleet)) return false;
      return await this.show(networkOfFleet(fleet));
    } catch {
      return false;
    }
  }

  /** Draws `network` unless a richer layer is on screen or the land outline cannot be had. */
  async show(network: Network): Promise<boolean> {
    if (!mayReplace(this.source, network.source)) return false;
    // The same network again (a refresh that found no change): nothing to redraw, no flicker.
    if (this.network && JSON.stringify(this.network) === JSON.stringify(network)) return true;
    let land: Land;
    try {
      land = await landOf(this.getAttribute('world-src') ?? '/world-land.geojson');
    } catch {
      return false;
    }
    // A richer layer may have drawn while the land was on its way.
    if (!mayReplace(this.source, network.source)) return false;
    this.source = network.source;
    this.network = network;
    this.innerHTML = mapSvg(network, land);
    this.dispatchEvent(new CustomEvent('fleetmap:drawn', { detail: network, bubbles: true }));
    return true;
  }
}

if (!customElements.get('fleet-map')) customElements.define('fleet-map', FleetMap);

const formatTime = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** The page's figures and the refresh layer: `/public/map`, checked, then shown; a failure keeps what is there. */
function bootPage(root: HTMLElement): void {
  const controlUrl = root.dataset.control;
  const map = root.querySelector<FleetMap>('fleet-map');
  const list = root.querySelector<HTMLElement>('#places');
  if (!controlUrl || !map || !list) return;
  root.addEventListener('fleetmap:drawn', (event) => {
    list.innerHTML = placesList((event as CustomEvent<Network>).detail);
    root.dataset.layer = (event as CustomEvent<Network>).detail.source;
  });
  const figures = (doc: PublicMap) => {
    for (const key of ['nodes_online', 'bgp_sessions', 'routes'] as const) {
      const el = root.querySelector<HTMLElement>(`[data-stat="${key}"]`);
      if (el) el.textContent = doc.stats[key].toLocaleString('en');
    }
    const time = root.querySelector<HTMLTimeElement>('time[data-updated]');
    if (time) {
      time.dateTime = doc.updated_at;
      time.textContent = formatTime(doc.updated_at);
    }
    root.querySelector<HTMLElement>('.asof')?.removeAttribute('hidden');
  };
  every(MAP_EVERY_MS, async () => {
    try {
      const doc = await getJson(`${controlUrl}/control/v1/public/map`);
      if (!isPublicMap(doc)) return;
      figures(doc);
      await map.show(networkOfMap(doc, 'map'));
    } catch {
      // The snapshot (or the last refresh) stays on screen.
    }
  });
}

const page = document.getElementById('network');
if (page) bootPage(page);
