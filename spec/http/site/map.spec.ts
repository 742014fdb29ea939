import { expect } from 'chai';
import { countryName, esc, frameOf, MAP_HEIGHT, MAP_WIDTH, mapSummary, mapSvg, placeLabels, placesList, projectionFor } from '../../../web/site/draw.js';
import type { PublicFleet } from '../../../domain/public/fleet-overview.js';
import type { PublicMap } from '../../../domain/public/map.js';
import { isPublicFleet, isPublicMap, mayReplace, networkOfFleet, networkOfMap } from '../../../domain/public/network.js';

const MAP: PublicMap = {
  asn: 4242420042,
  updated_at: '2026-11-01T12:00:00.000Z',
  stats: { nodes_online: 2, bgp_sessions: 5, routes: 660 },
  nodes: [
    { label: 'AMS', lat: 52.4, lon: 4.9, city: 'Amsterdam', country: 'NL', region: 41, online: true, sessions: 3 },
    { label: 'FRA', lat: 50.1, lon: 8.7, city: 'Frankfurt', country: 'DE', region: 41, online: false, sessions: 0 },
  ],
  links: [
    ['AMS', 'FRA'],
    ['AMS', 'XXX'],
  ],
};

const row = (node_id: string, site: string | null, geo: { lat: number; lon: number; city: string; country: string } | null, health = 'ok') =>
  ({
    node_id,
    site,
    region: null,
    geo: geo && { ...geo, region: 41 },
    health,
    liveness: 'online',
    generation: 1,
    drift_count: 0,
    agent_version: null,
    last_heartbeat_at: null,
    capabilities: [],
    adjacencies: [],
  }) as unknown as PublicFleet['nodes'][number];

const FRA = { lat: 50.1, lon: 8.7, city: 'Frankfurt', country: 'DE' };
const AMS = { lat: 52.4, lon: 4.9, city: 'Amsterdam', country: 'NL' };

const FLEET = {
  generated_at: '2026-11-01T12:00:00.000Z',
  nodes: [
    row('edge-fra-2', 'FRA-2', FRA, 'down'),
    row('edge-fra-1', 'fra1', FRA, 'down'),
    row('core-ams-1', 'ams1', AMS, 'degraded'),
    row('lab-1', null, null),
    row('x-1', 'somewhere', { lat: 1, lon: 2, city: 'Elsewhere', country: 'ZZ' }, 'unknown'),
  ],
  links: [
    { a: 'core-ams-1', b: 'edge-fra-1' },
    { a: 'core-ams-1', b: 'edge-fra-2' },
    { a: 'edge-fra-1', b: 'edge-fra-2' },
    { a: 'edge-fra-1', b: 'lab-1' },
  ],
} as unknown as PublicFleet;

describe('home site map (pure)', () => {
  describe('networks', () => {
    it('takes the public map as it is, dropping a link to a place it does not list', () => {
      const n = networkOfMap(MAP, 'map');
      expect(n.source).to.equal('map');
      expect(n.places.map((p) => [p.key, p.online, p.sessions, p.nodes])).to.deep.equal([
        ['AMS', true, 3, []],
        ['FRA', false, 0, []],
      ]);
      expect(n.links).to.deep.equal([['AMS', 'FRA']]);
    });

    it('folds fleet rows by city: nodes listed in id order, online if any is ok or degraded, node links become place links without self-loops', () => {
      const n = networkOfFleet(FLEET);
      expect(n.source).to.equal('fleet');
      expect(n.places.map((p) => [p.key, p.online, p.nodes, p.sessions])).to.deep.equal([
        ['AMS', true, ['core-ams-1'], null],
        ['Elsewhere, ZZ', false, ['x-1'], null],
        ['FRA', false, ['edge-fra-1', 'edge-fra-2'], null],
      ]);
      expect(n.links).to.deep.equal([['AMS', 'FRA']]);
    });

    it('lets a layer replace only an equal or poorer one', () => {
      expect(mayReplace('snapshot', 'map')).to.equal(true);
      expect(mayReplace('snapshot', 'fleet')).to.equal(true);
      expect(mayReplace('map', 'map')).to.equal(true);
      expect(mayReplace('fleet', 'map')).to.equal(false);
      expect(mayReplace('fleet', 'snapshot')).to.equal(false);
      expect(mayReplace('map', 'snapshot')).to.equal(false);
    });

    it('tells a public map and a public fleet from anything else', () => {
      expect(isPublicMap(MAP)).to.equal(true);
      expect(isPublicMap({ ...MAP, asn: null, nodes: [], links: [] })).to.equal(true);
      for (const bad of [
        null,
        'x',
        {},
        { ...MAP, stats: { nodes_online: 1 } },
        { ...MAP, nodes: [{ label: 'A' }] },
        { ...MAP, links: [['A']] },
        { detail: 'unavailable' },
      ])
        expect(isPublicMap(bad), JSON.stringify(bad)).to.equal(false);
      expect(isPublicFleet(FLEET)).to.equal(true);
      for (const bad of [
        null,
        {},
        { ...FLEET, nodes: [{ node_id: 1 }] },
        { ...FLEET, links: [{ a: 'x' }] },
        { ...FLEET, nodes: [{ ...FLEET.nodes[0], geo: { lat: 'x' } }] },
      ])
        expect(isPublicFleet(bad), JSON.stringify(bad)).to.equal(false);
    });
  });

  describe('the view', () => {
    it('frames the whole world without places, and a region with a margin around close places', () => {
      expect(frameOf([])).to.deep.equal({ west: -180, east: 180, south: -56, north: 80 });
      const f = frameOf([
        { lat: 52.4, lon: 4.9 },
        { lat: 50.1, lon: 8.7 },
      ]);
      expect(f.east - f.west).to.be.at.least(50);
      expect(f.north - f.south).to.be.at.least(26);
      expect(f.west).to.be.below(4.9);
      expect(f.east).to.be.above(8.7);
      expect(f.north).to.be.at.most(80);
    });

    it('opens to the whole width of the world when the places span most of it', () => {
      const f = frameOf([
        { lat: 40.7, lon: -122 },
        { lat: 35.7, lon: 139.7 },
      ]);
      expect([f.west, f.east]).to.deep.equal([-180, 180]);
    });

    it('puts every place inside the map', () => {
      const places = [
        { lat: 60.2, lon: 24.9 },
        { lat: -33.9, lon: 151.2 },
        { lat: 40.7, lon: -74 },
        { lat: 1.3, lon: 103.8 },
      ];
      const projection = projectionFor(frameOf(places));
      for (const p of places) {
        const [x, y] = projection([p.lon, p.lat])!;
        expect(x).to.be.within(0, MAP_WIDTH);
        expect(y).to.be.within(0, MAP_HEIGHT);
      }
    });

    it('places labels where they hit no other label or marker, and leaves out one that fits nowhere', () => {
      const labels = placeLabels([
        { key: 'A', x: 100, y: 100, text: 'Amsterdam' },
        { key: 'B', x: 112, y: 100, text: 'Brussels' },
        { key: 'C', x: 106, y: 106, text: 'Cologne' },
        { key: 'D', x: 106, y: 94, text: 'Dortmund' },
        { key: 'E', x: 400, y: 300, text: 'Essen' },
        { key: 'F', x: 955, y: 300, text: 'Far East' },
        { key: 'G', x: 600, y: 200, text: 'Graz' },
        { key: 'G1', x: 615, y: 200, text: 'g' },
        { key: 'G2', x: 585, y: 200, text: 'g' },
        { key: 'G3', x: 600, y: 185, text: 'g' },
        { key: 'G4', x: 600, y: 215, text: 'g' },
      ]);
      // A is hemmed in on the right by B: its label goes left.
      expect(labels.get('A')).to.deep.equal({ x: 90, y: 105, anchor: 'end' });
      expect(labels.get('E')).to.deep.equal({ x: 410, y: 305, anchor: 'start' });
      // F sits at the right edge: its label goes left.
      expect(labels.get('F')).to.deep.include({ anchor: 'end' });
      // G has a marker on every side: no label (the list names it).
      expect(labels.has('G')).to.equal(false);
    });

    it('draws land, links and markers, with every text escaped', () => {
      const n = networkOfMap({ nodes: [{ ...MAP.nodes[0], city: '<b>"Am"&</b>', label: 'A"M' }, MAP.nodes[1]], links: [['A"M', 'FRA']] }, 'snapshot');
      const land = {
        type: 'Feature' as const,
        properties: {},
        geometry: {
          type: 'Polygon' as const,
          coordinates: [
            [
              [0, 40],
              [20, 40],
              [20, 60],
              [0, 60],
              [0, 40],
            ],
          ],
        },
      };
      const svg = mapSvg(n, land);
      expect(svg).to.include('data-key="A&quot;M"');
      expect(svg).to.include('&lt;b&gt;&quot;Am&quot;&amp;&lt;/b&gt;');
      expect(svg).to.not.include('<b>');
      expect(svg).to.match(/<path class="land" d="M[^"]+Z"/);
      expect(svg.match(/<path class="link"/g)).to.have.length(1);
      expect(svg).to.include('data-places="2" data-links="1"');
      expect(mapSvg(n, null)).to.not.include('class="land"');
    });

    it('summarises the map in one sentence and lists the places with what the layer knows', () => {
      expect(mapSummary(networkOfMap({ nodes: [], links: [] }, 'snapshot'))).to.equal('World map. Our points of presence appear here as they come online.');
      expect(mapSummary(networkOfMap(MAP, 'map'))).to.match(/^World map of our 2 points of presence \(1 online\) and the 1 link between them/);
      const fromMap = placesList(networkOfMap(MAP, 'map'));
      expect(fromMap).to.include('Amsterdam, Netherlands</span> <span class="facts">online · 3 BGP sessions</span>');
      expect(fromMap).to.include('Frankfurt, Germany</span> <span class="facts">offline · 0 BGP sessions</span>');
      const fromFleet = placesList(networkOfFleet(FLEET));
      expect(fromFleet).to.include(
        'offline · 2 nodes</span> <span class="nodes"><a href="/nodes/edge-fra-1">edge-fra-1</a> <a href="/nodes/edge-fra-2">edge-fra-2</a></span>',
      );
      expect(countryName('DE')).to.equal('Germany');
      expect(countryName('not a code')).to.equal('not a code');
      expect(esc(`<'&">`)).to.equal('&lt;&#39;&amp;&quot;&gt;');
    });
  });
});
