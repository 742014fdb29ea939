import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { expect422, postTable, route } from './support.js';

const A1 = 4242420001;
const A2 = 4242420002;
const A3 = 4242420003;
/** Nodes that report together in the last test. */
const NODES = Array.from({ length: 8 }, (_, i) => `m${i}`);

describe('control: fleet routing (/admin/routing/fleet, /ui/routing/fleet-overview)', function () {
  this.timeout(60_000);
  let h: AgentHarness;
  let beforeAnyTable: Record<string, any>;

  before(async () => {
    h = await startAgents(['a', 'b', 'c', ...NODES]);
    beforeAnyTable = (await h.admin.get('/ui/routing/fleet-overview')).body;
    // a observes RPKI; b does not; c never sends a table.
    await postTable(h.agent.a, 'a', '2026-11-01T11:41:00Z', [
      route('172.20.0.0/24', A1, [A1]),
      route('172.20.1.0/24', A2, [A2], { rpki: 'invalid' }),
      route('fd42:1::/48', A2, [A2]),
      route('fd42:3::/48', A2, [A2], { rpki: 'not_found' }),
    ]);
    await postTable(
      h.agent.b,
      'b',
      '2026-11-01T11:52:00Z',
      [
        route('172.20.0.0/24', A1, [A3, A1], { rpki: null }),
        route('172.20.2.0/24', A3, [A3], { rpki: null }),
        route('172.20.3.0/24', A3, [A3], { rpki: null }),
        route('172.22.0.0/24', null, [], { rpki: null, local: true }),
      ],
      false,
    );
  });
  after(async () => h?.close());

  const fleetSummary = {
    nodes_reporting: 2,
    size: 7,
    size_v4: 5,
    size_v6: 2,
    local: 1,
    external: 6,
    as_count: 3,
    as_count_v4: 3,
    as_count_v6: 1,
    // Only a's table has RPKI states: b's routes are not counted, not counted as not_found.
    rpki: { valid: 2, invalid: 1, not_found: 1 },
    rpki_v4: { valid: 1, invalid: 1, not_found: 0 },
    rpki_v6: { valid: 1, invalid: 0, not_found: 1 },
  };

  it('answers zeros, null RPKI and null times before any table', () => {
    expect(beforeAnyTable).to.deep.include({
      captured_at: null,
      summary: {
        nodes_reporting: 0,
        size: 0,
        size_v4: 0,
        size_v6: 0,
        local: 0,
        external: 0,
        as_count: 0,
        as_count_v4: 0,
        as_count_v6: 0,
        rpki: null,
        rpki_v4: null,
        rpki_v6: null,
      },
      origins: [],
    });
    expect(beforeAnyTable.trend).to.have.length(144);
    expect(beforeAnyTable.trend.every((p: { size: unknown }) => p.size === null)).to.equal(true);
    expect(beforeAnyTable.nodes.every((n: { size: unknown }) => n.size === null)).to.equal(true);
  });

  it('summarises the union of the latest tables and lists every node, nulls before its first table', async () => {
    const res = await h.admin.get('/admin/routing/fleet');
    expectResponse(res).status(200);
    expect(res.body.captured_at).to.equal('2026-11-01T11:52:00.000Z');
    expect(res.body.summary).to.deep.equal(fleetSummary);
    expect(res.body.nodes.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['a', 'b', 'c', ...NODES]);
    expect(res.body.nodes[0]).to.deep.include({
      node_id: 'a',
      size: 4,
      size_v4: 2,
      size_v6: 2,
      as_count: 2,
      rpki_observed: true,
      rpki: { valid: 2, invalid: 1, not_found: 1 },
      announced: null,
    });
    expect(res.body.nodes[1]).to.deep.include({ node_id: 'b', size: 4, as_count: 2, rpki_observed: false, rpki: null });
    expect(res.body.nodes[2]).to.deep.equal({
      node_id: 'c',
      captured_at: null,
      received_at: null,
      rpki_observed: null,
      size: null,
      size_v4: null,
      size_v6: null,
      as_count: null,
      rpki: null,
      announced: null,
      withdrawn: null,
      geo: { lat: 50.1, lon: 8.7, city: 'Frankfurt', country: 'DE', region: 41 },
    });
  });

  it('gives the fleet overview the same summary and rows, the fleet trend on the 24h grid and the top origins', async () => {
    const res = await h.admin.get('/ui/routing/fleet-overview');
    expectResponse(res).status(200);
    const admin = (await h.admin.get('/admin/routing/fleet')).body;
    expect(res.body).to.deep.include({
      generated_at: '2026-11-01T12:00:00.000Z',
      captured_at: '2026-11-01T11:52:00.000Z',
      summary: fleetSummary,
      nodes: admin.nodes,
    });
    // Document 3: every row with a node carries geo, the node's as /ui/nodes shows it.
    const geoOf = new Map((await h.admin.get('/ui/nodes')).body.map((n: { node_id: string; geo: unknown }) => [n.node_id, n.geo]));
    expect(res.body.nodes.map((n: { node_id: string; geo: unknown }) => [n.node_id, n.geo])).to.deep.equal(
      res.body.nodes.map((n: { node_id: string }) => [n.node_id, geoOf.get(n.node_id)]),
    );
    expect(res.body.nodes.every((n: { geo: unknown }) => n.geo !== null && n.geo !== undefined)).to.equal(true);
    const { trend } = res.body;
    expect(trend).to.have.length(144);
    // The union after each table, at that table's capture time: a alone at 11:41, a and b at 11:52.
    expect(trend[141]).to.deep.equal({ at: '2026-11-01T11:40:00.000Z', size: 4, size_v4: 2, size_v6: 2 });
    expect(trend[142]).to.deep.equal({ at: '2026-11-01T11:50:00.000Z', size: 7, size_v4: 5, size_v6: 2 });
    expect(trend[143]).to.deep.equal({ at: '2026-11-01T12:00:00.000Z', size: null, size_v4: null, size_v6: null });
    expect(res.body.origins).to.deep.equal([
      { asn: A2, name: null, count: 3, count_v4: 1, count_v6: 2, nodes: 1 },
      { asn: A3, name: null, count: 2, count_v4: 2, count_v6: 0, nodes: 1 },
      { asn: A1, name: null, count: 1, count_v4: 1, count_v6: 0, nodes: 2 },
    ]);
  });

  it('sorts origins by count, v4 or v6 (ties by total count, then ASN) and keeps origins_top', async () => {
    const order = async (q: string) => (await h.admin.get(`/ui/routing/fleet-overview?${q}`)).body.origins.map((o: { asn: number }) => o.asn);
    expect(await order('origins_sort=count')).to.deep.equal([A2, A3, A1]);
    expect(await order('origins_sort=v4')).to.deep.equal([A3, A2, A1]);
    expect(await order('origins_sort=v6')).to.deep.equal([A2, A3, A1]);
    expect(await order('origins_sort=v4&origins_top=1')).to.deep.equal([A3]);
    expect(await order('origins_top=200')).to.have.length(3);
    for (const q of ['origins_sort=name', 'origins_top=0', 'origins_top=201', 'origins_top=x', 'range=24h'])
      await expect422(h.admin, `/ui/routing/fleet-overview?${q}`);
  });

  it('follows a node that replaces its table: the union shrinks and a new fleet trend point is recorded', async () => {
    h.sys.clock.advance(10 * 60_000); // 12:10
    await postTable(h.agent.a, 'a', '2026-11-01T12:09:00Z', [route('172.20.0.0/24', A1, [A1])]);
    const { summary, trend } = (await h.admin.get('/ui/routing/fleet-overview')).body;
    expect(summary).to.deep.include({ size: 4, size_v4: 4, size_v6: 0, as_count: 2, rpki: { valid: 1, invalid: 0, not_found: 0 } });
    expect(trend[143]).to.deep.equal({ at: '2026-11-01T12:10:00.000Z', size: null, size_v4: null, size_v6: null });
    expect(trend[142]).to.deep.equal({ at: '2026-11-01T12:00:00.000Z', size: 4, size_v4: 4, size_v6: 0 });
    const rowA = (await h.admin.get('/admin/routing/fleet')).body.nodes[0];
    expect(rowA).to.deep.include({ size: 1, announced: 0, withdrawn: 3 });
  });

  it('covers every table of nodes reporting at the same time once they are all answered (refreshes share runs, none is lost)', async () => {
    await Promise.all(NODES.map((id, i) => postTable(h.agent[id], id, '2026-11-01T12:09:30Z', [route(`172.23.${i}.0/24`, 4242421000 + i, [4242421000 + i])])));
    const { summary, origins } = (await h.admin.get('/ui/routing/fleet-overview?origins_top=200')).body;
    expect(summary).to.deep.include({ nodes_reporting: 2 + NODES.length, size: 4 + NODES.length, as_count: 2 + NODES.length });
    expect(origins).to.have.length(2 + NODES.length);
  });

  const fleetOf = async () => (await h.admin.get('/admin/routing/fleet')).body;
  const routeRows = async (nodeId: string) => (await h.sys.pool.query(`SELECT count(*)::int AS n FROM routing_routes WHERE node_id = $1`, [nodeId])).rows[0].n;

  it('leaves a decommissioned node out of the union at once (its own table stays), and takes it back when recommissioned', async () => {
    const before = await fleetOf();
    expectResponse(await h.admin.post('/admin/nodes/m0/decommission', {})).status(200);
    const after = await fleetOf();
    expect(after.summary).to.deep.include({
      nodes_reporting: before.summary.nodes_reporting - 1,
      size: before.summary.size - 1,
      as_count: before.summary.as_count - 1,
    });
    const origins = (await h.admin.get('/ui/routing/fleet-overview?origins_top=200')).body.origins.map((o: { asn: number }) => o.asn);
    expect(origins).not.to.include(4242421000);
    expect(after.nodes.find((n: { node_id: string }) => n.node_id === 'm0')).to.deep.include({ size: 1 });
    expect(await routeRows('m0')).to.equal(1);

    expectResponse(await h.admin.post('/admin/nodes/m0/recommission', {})).status(200);
    expect((await fleetOf()).summary).to.deep.equal(before.summary);
  });

  it('forgets a deleted node: its latest table and route rows go, the union and the origins lose it at once', async () => {
    const before = await fleetOf();
    expect(await routeRows('m1')).to.equal(1);
    expectResponse(await h.admin.post('/admin/nodes/m1/decommission', {})).status(200);
    expectResponse(await h.admin.delete('/admin/nodes/m1')).status(204);
    expect(await routeRows('m1')).to.equal(0);
    expect((await h.sys.pool.query(`SELECT 1 FROM routing_tables WHERE node_id = 'm1'`)).rows).to.deep.equal([]);
    const after = await fleetOf();
    expect(after.summary).to.deep.include({ nodes_reporting: before.summary.nodes_reporting - 1, size: before.summary.size - 1 });
    expect(after.nodes.map((n: { node_id: string }) => n.node_id)).not.to.include('m1');
    const { origins } = (await h.admin.get('/ui/routing/fleet-overview?origins_top=200')).body;
    expect(origins.map((o: { asn: number }) => o.asn)).not.to.include(4242421001);
  });

  // A database migrated to 0010 holds tables but no fleet refresh until a table arrives.
  const dropFleetRefreshes = () => h.sys.pool.query(`DELETE FROM routing_fleet_observations; DELETE FROM routing_fleet_origins`);

  it('computes the union once when none is stored but tables are (at the first read of either fleet view)', async () => {
    const admin = await fleetOf();
    const overview = (await h.admin.get('/ui/routing/fleet-overview?origins_top=200')).body;
    expect(admin.summary.size).to.be.above(0);

    await dropFleetRefreshes();
    expect(await fleetOf()).to.deep.equal(admin);
    const stored = await h.sys.pool.query(`SELECT count(*)::int AS n FROM routing_fleet_observations`);
    expect(stored.rows[0].n).to.equal(1);
    expect((await h.admin.get('/ui/routing/fleet-overview?origins_top=200')).body).to.deep.include({ summary: overview.summary, origins: overview.origins });

    await dropFleetRefreshes();
    const first = (await h.admin.get('/ui/routing/fleet-overview?origins_top=200')).body;
    expect(first).to.deep.include({ captured_at: overview.captured_at, summary: overview.summary, origins: overview.origins });
  });
});
