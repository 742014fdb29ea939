import { expect } from 'chai';
import { buildFleetOverview, PUBLIC_FLEET_ROW_FIELDS, publicFleet } from '../../../domain/public/fleet-overview.js';
import { adj, fact } from './support.js';

const options = { generatedAt: new Date('2026-11-01T12:00:00Z'), targetVersion: '1.0.200' };

describe('fleet overview and the public fleet', () => {
  it('builds one row per node, ordered by node_id, with geo from the site and the own region winning', () => {
    const overview = buildFleetOverview([fact('b', { site: 'ams1', labels: { region: 44 } }), fact('a', { site: 'moon' })], options);
    expect(overview.nodes.map((n) => n.node_id)).to.deep.equal(['a', 'b']);
    expect(overview.nodes[0]).to.deep.include({ site: 'moon', geo: null, region: null });
    expect(overview.nodes[1]).to.deep.include({ region: 44, geo: { lat: 52.4, lon: 4.9, city: 'Amsterdam', country: 'NL', region: 44 } });
  });

  it('counts health and liveness; agents_behind counts versions below the target', () => {
    const facts = [
      fact('a', { health: 'ok', agent_version: '1.0.190' }),
      fact('b', { health: 'degraded', liveness: 'stale', agent_version: '1.0.200' }),
      fact('c', { health: 'unknown', liveness: 'offline', agent_version: null }),
      fact('d', { health: 'stale', liveness: 'offline', agent_version: '1.0.9' }),
    ];
    const overview = buildFleetOverview(facts, options);
    expect(overview.summary).to.deep.equal({ total: 4, ok: 1, degraded: 1, stale: 1, down: 0, unknown: 1 });
    expect(overview.agent_summary).to.deep.equal({ online: 1, stale: 1, offline: 2, agents_behind: 2 });
    expect(buildFleetOverview(facts, { ...options, targetVersion: null }).agent_summary.agents_behind).to.equal(0);
  });

  it('links adjacent nodes as {a, b} with a < b, deduplicated and sorted, only between listed nodes', () => {
    const overview = buildFleetOverview(
      [
        fact('c', { adjacencies: [adj('a'), adj('b')] }),
        fact('a', { adjacencies: [adj('c'), adj('a'), adj('ghost')] }),
        fact('b', { adjacencies: [adj('c')] }),
      ],
      options,
    );
    expect(overview.links).to.deep.equal([
      { a: 'a', b: 'c' },
      { a: 'b', b: 'c' },
    ]);
    expect(overview.nodes[2].adjacencies).to.deep.equal([adj('a'), adj('b')]);
  });

  it('shows the public exactly the allow-listed row fields, and only active nodes', () => {
    const fleet = publicFleet([fact('a', { adjacencies: [adj('gone')] }), fact('gone', { lifecycle: 'decommissioned', adjacencies: [adj('a')] })], options);
    expect(Object.keys(fleet)).to.deep.equal(['generated_at', 'summary', 'agent_summary', 'nodes', 'links']);
    expect(fleet.nodes.map((n) => n.node_id)).to.deep.equal(['a']);
    expect(Object.keys(fleet.nodes[0])).to.deep.equal([...PUBLIC_FLEET_ROW_FIELDS]);
    expect(fleet.nodes[0]).to.not.have.property('lifecycle');
    expect(fleet.summary.total).to.equal(1);
    expect(fleet.links).to.deep.equal([]);
    expect(fleet.generated_at).to.equal('2026-11-01T12:00:00.000Z');
  });

  it('carries the row values the contract names: health, generation, drift, agent version, heartbeat time, capabilities', () => {
    const [row] = publicFleet([fact('a', { generation: 9, drift_count: 2, health: 'degraded' })], options).nodes;
    expect(row).to.deep.equal({
      node_id: 'a',
      site: 'fra1',
      region: 41,
      geo: { lat: 50.1, lon: 8.7, city: 'Frankfurt', country: 'DE', region: 41 },
      health: 'degraded',
      liveness: 'online',
      generation: 9,
      drift_count: 2,
      agent_version: '1.0.200',
      last_heartbeat_at: '2026-11-01T11:59:30.000Z',
      capabilities: ['bird', 'wireguard'],
      adjacencies: [],
    });
  });
});
