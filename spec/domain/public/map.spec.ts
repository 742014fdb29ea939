import { expect } from 'chai';
import { CITIES, cityCodeOf } from '../../../domain/public/cities.js';
import { oneDecimal, placementOf } from '../../../domain/public/geo.js';
import { dn42RegionOf } from '../../../domain/node/region.js';
import { buildPublicMap, fleetAsn, median } from '../../../domain/public/map.js';
import { adj, fact } from './support.js';

const at = new Date('2026-11-01T12:00:00Z');

describe('public map', () => {
  it('has exactly the contract fields, at the generation time', () => {
    const map = buildPublicMap([fact('a')], at);
    expect(Object.keys(map)).to.deep.equal(['asn', 'updated_at', 'stats', 'nodes', 'links']);
    expect(map.updated_at).to.equal('2026-11-01T12:00:00.000Z');
    expect(Object.keys(map.stats)).to.deep.equal(['nodes_online', 'bgp_sessions', 'routes']);
    expect(map.nodes[0]).to.deep.equal({ label: 'FRA', lat: 50.1, lon: 8.7, city: 'Frankfurt', country: 'DE', region: 41, online: true, sessions: 2 });
  });

  it('folds same-city nodes into one point: online if any is, sessions of online nodes summed', () => {
    const map = buildPublicMap(
      [
        fact('fra-a', { health: 'stale', bgp_established: 7 }),
        fact('fra-b', { site: 'FRA2', health: 'degraded', bgp_established: 3 }),
        fact('ams', { site: 'ams-1', health: 'down', bgp_established: 0 }),
      ],
      at,
    );
    expect(map.nodes.map((n) => [n.label, n.online, n.sessions])).to.deep.equal([
      ['AMS', false, 0],
      ['FRA', true, 3],
    ]);
  });

  it('sorts points by label and leaves out decommissioned nodes and sites the city table does not know', () => {
    const map = buildPublicMap(
      [
        fact('z', { site: 'sin1' }),
        fact('y', { site: 'ams1' }),
        fact('x', { site: 'nowhere1' }),
        fact('w', { site: null }),
        fact('v', { site: 'lax1', lifecycle: 'decommissioned' }),
      ],
      at,
    );
    expect(map.nodes.map((n) => n.label)).to.deep.equal(['AMS', 'SIN']);
    expect(map.stats.nodes_online).to.equal(4);
  });

  it("uses a node's own region over the city table's (the first node by id decides a folded point)", () => {
    const map = buildPublicMap(
      [fact('b', { labels: { region: 44 } }), fact('c', { labels: { region: '43' } }), fact('d', { site: 'ams1', labels: { region: 99 } })],
      at,
    );
    expect(map.nodes.map((n) => [n.label, n.region])).to.deep.equal([
      ['AMS', 41],
      ['FRA', 44],
    ]);
  });

  it('links city labels over WireGuard adjacency: a < b, deduplicated, sorted, no self-loops, only placed active nodes', () => {
    const map = buildPublicMap(
      [
        fact('fra-a', { adjacencies: [adj('ams'), adj('fra-b'), adj('sin'), adj('gone'), adj('lost')] }),
        fact('fra-b', { site: 'fra2', adjacencies: [adj('ams'), adj('fra-a')] }),
        fact('ams', { site: 'ams1', adjacencies: [adj('fra-a'), adj('sin')] }),
        fact('sin', { site: 'sin1', adjacencies: [adj('ams'), adj('fra-a')] }),
        fact('gone', { site: 'lax1', lifecycle: 'decommissioned', adjacencies: [adj('fra-a')] }),
        fact('lost', { site: 'atlantis', adjacencies: [adj('fra-a')] }),
      ],
      at,
    );
    expect(map.links).to.deep.equal([
      ['AMS', 'FRA'],
      ['AMS', 'SIN'],
      ['FRA', 'SIN'],
    ]);
  });

  it('counts online nodes (ok, degraded), established sessions of online nodes and the median table size of active nodes', () => {
    const facts = [
      fact('a', { health: 'ok', bgp_established: 4, table_size: 100 }),
      fact('b', { health: 'degraded', bgp_established: 1, table_size: 300 }),
      fact('c', { health: 'stale', bgp_established: 9, table_size: 250 }),
      fact('d', { health: 'unknown', bgp_established: 0, table_size: null }),
      fact('e', { health: 'down', bgp_established: 0, table_size: 0 }),
      fact('f', { health: 'ok', lifecycle: 'decommissioned', bgp_established: 5, table_size: 9999 }),
    ];
    expect(buildPublicMap(facts, at).stats).to.deep.equal({ nodes_online: 2, bgp_sessions: 5, routes: 175 });
  });

  it('takes the most common ASN of the node records (lowest on a tie), null without nodes', () => {
    expect(fleetAsn([{ asn: 5 }, { asn: 3 }, { asn: 5 }])).to.equal(5);
    expect(fleetAsn([{ asn: 5 }, { asn: 3 }])).to.equal(3);
    expect(buildPublicMap([], at)).to.deep.equal({
      asn: null,
      updated_at: at.toISOString(),
      stats: { nodes_online: 0, bgp_sessions: 0, routes: 0 },
      nodes: [],
      links: [],
    });
  });

  it('takes the median: middle value, rounded mean of the middle two, 0 for none', () => {
    expect(median([5, 1, 3])).to.equal(3);
    expect(median([4, 1, 2, 10])).to.equal(3);
    expect(median([1, 2])).to.equal(2);
    expect(median([])).to.equal(0);
  });
});

describe('city table and placement', () => {
  it('maps a site to its city code: upper-cased, one trailing instance number dropped', () => {
    expect(['fra1', 'FRA', 'fra-2', 'Fra_03', ' ams1 '].map(cityCodeOf)).to.deep.equal(['FRA', 'FRA', 'FRA', 'FRA', 'AMS']);
    expect(['fra1a', 'de-fra1', 'xyz1', '', null, 'constructor', 'toString'].map(cityCodeOf)).to.deep.equal([null, null, null, null, null, null, null]);
  });

  it('holds about forty cities with ISO countries, sane coordinates and regions 41..57', () => {
    const entries = Object.entries(CITIES);
    expect(entries.length).to.be.within(40, 80);
    for (const [code, city] of entries) {
      expect(code, code).to.match(/^[A-Z]{3}$/);
      expect(city.country, code).to.match(/^[A-Z]{2}$/);
      expect(city.lat, code).to.be.within(-90, 90);
      expect(city.lon, code).to.be.within(-180, 180);
      expect(city.region, code).to.be.within(41, 57);
    }
  });

  it('rounds coordinates to one decimal and takes only a region 41..57 as the node own', () => {
    expect([50.1109, 8.6821, -46.63, -0.05].map(oneDecimal)).to.deep.equal([50.1, 8.7, -46.6, -0]);
    expect([44, '57', 40, 58, '4x', 41.5, null].map((region) => dn42RegionOf({ region }))).to.deep.equal([44, 57, null, null, null, null, null]);
    expect(placementOf('nowhere', { region: 44 })).to.deep.equal({ code: null, geo: null, region: 44 });
    expect(placementOf('sin1', {})).to.deep.equal({ code: 'SIN', geo: { lat: 1.3, lon: 103.8, city: 'Singapore', country: 'SG', region: 51 }, region: 51 });
  });
});
