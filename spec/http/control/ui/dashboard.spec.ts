import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { wg } from '../fleet/support.js';
import { snapshot, startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { steadyTraffic } from './series-support.js';

/** Peer ASes of node d1 and their rx rate (tx is twice that): six, so the series stop at five. */
const PEERS = [
  { asn: 4242420011, rate: 600 },
  { asn: 4242420012, rate: 500 },
  { asn: 4242420013, rate: 400 },
  { asn: 4242420014, rate: 300 },
  { asn: 4242420015, rate: 200 },
  { asn: 4242420016, rate: 100 },
];
const ifaceOf = (asn: number) => `dn42_${asn % 100}`;

describe('Console dashboard (/ui/dashboard)', function () {
  this.timeout(90_000);
  let h: AgentHarness;

  before(async () => {
    h = await startAgents(['d1', 'd2']);
    let port = 51801;
    for (const p of PEERS) {
      const peering = await h.admin.post('/admin/nodes/d1/peerings', { name: `as${p.asn}`, remote_asn: p.asn });
      expectResponse(peering).status(201);
      expectResponse(await h.admin.post('/admin/nodes/d1/interfaces', { spec: wg(ifaceOf(p.asn), port++), peering_id: peering.body.id })).status(201);
    }
    // An interface without a peering (internal mesh): counted as internal, never ranked.
    expectResponse(await h.admin.post('/admin/nodes/d1/interfaces', { spec: wg('int_d2', port) })).status(201);
    h.sys.clock.current = new Date('2026-11-02T10:00:00Z');
    await steadyTraffic(h, 'd1', { ...Object.fromEntries(PEERS.map((p) => [ifaceOf(p.asn), p.rate])), int_d2: 1000 }, 10); // 10:00 to 10:10
    h.sys.clock.current = new Date('2026-11-02T10:00:00Z');
    await steadyTraffic(h, 'd2', { int_d1: 50 }, 10);
    // Routing tables, so that the routing block has something to equal.
    const route = (prefix: string, origin: number) => ({
      prefix,
      protocol: 'dn42_11',
      origin_asn: origin,
      as_path: [4242420011, origin],
      rpki: 'valid',
      local: false,
    });
    for (const [nodeId, routes] of [
      ['d1', [route('172.20.1.0/24', 4242420011), route('fd42:1::/48', 4242420012)]],
      ['d2', [route('172.20.2.0/24', 4242420013)]],
    ] as const) {
      expectResponse(
        await h.agent[nodeId].post('/agent/routing-table', { node_id: nodeId, captured_at: h.sys.clock.now().toISOString(), rpki_observed: true, routes }),
      ).status(200);
    }
  });
  after(async () => h?.close());

  it('keeps traffic_by_as and traffic_mix present and null without as_traffic, and peering_issues an empty array', async () => {
    h.sys.clock.current = new Date('2026-11-02T10:11:00Z');
    const res = await h.admin.get('/ui/dashboard');
    expectResponse(res).status(200);
    expect(Object.keys(res.body).sort()).to.deep.equal([
      'generated_at',
      'overview',
      'peering_issues',
      'routing',
      'traffic',
      'traffic_breakdown',
      'traffic_by_as',
      'traffic_mix',
    ]);
    expect(res.body).to.include({ traffic_by_as: null, traffic_mix: null, generated_at: '2026-11-02T10:11:00.000Z' });
    expect(res.body.peering_issues).to.deep.equal([]);
    expect(Object.keys(res.body.routing).sort()).to.include.members(['captured_at', 'summary', 'trend', 'origins']);
  });

  it('ranks peer ASes by the window bytes: top 5 series, the share table, the internal/external mix', async () => {
    h.sys.clock.current = new Date('2026-11-02T10:11:30Z');
    const res = await h.admin.get('/ui/dashboard?as_traffic=1');
    expectResponse(res).status(200);
    const { series, table } = res.body.traffic_by_as;
    const external = PEERS.reduce((s, p) => s + p.rate * 3 * 600, 0);
    expect(table.map((r: { asn: number }) => r.asn)).to.deep.equal(PEERS.map((p) => p.asn));
    expect(table[0]).to.deep.equal({
      asn: 4242420011,
      name: null,
      rx_bytes: 360_000,
      tx_bytes: 720_000,
      share: Math.round(((600 * 3 * 600) / external) * 10_000) / 10_000,
    });
    expect(series.map((s: { asn: number }) => s.asn)).to.deep.equal(PEERS.slice(0, 5).map((p) => p.asn));
    expect(series[0].points).to.have.length(120);
    const at = (iso: string) => series[1].points.find((p: { at: string }) => p.at === iso);
    expect(at('2026-11-02T10:05:00.000Z')).to.deep.include({ rx_bytes_per_sec: 500, tx_bytes_per_sec: 1000 });
    expect(at('2026-11-02T09:55:00.000Z')).to.deep.include({ rx_bytes_per_sec: null });
    const internal = 1000 * 3 * 600 + 50 * 3 * 600; // d1's mesh interface and all of d2
    expect(res.body.traffic_mix).to.deep.equal({
      internal_bytes: internal,
      external_bytes: external,
      rx_bytes: (external + internal) / 3,
      tx_bytes: ((external + internal) * 2) / 3,
    });
  });

  it('builds each block as its own endpoint does', async () => {
    h.sys.clock.current = new Date('2026-11-02T10:12:00Z');
    const q = 'range=6h&compare=1&traffic_limit=3&breakdown_top=1&origins_top=5&origins_sort=v4';
    const dashboard = (await h.admin.get(`/ui/dashboard?${q}`)).body;
    expect(dashboard.traffic).to.deep.equal((await h.admin.get('/ui/fleet/traffic?range=6h&compare=1')).body);
    expect(dashboard.traffic.points_previous).to.have.length(72);
    expect(dashboard.overview).to.deep.equal((await h.admin.get('/ui/fleet/overview')).body);
    expect(dashboard.traffic_breakdown).to.deep.equal((await h.admin.get('/ui/fleet/traffic-breakdown?peers_limit=3&breakdown_top=1')).body);
    const routing = (await h.admin.get('/ui/routing/fleet-overview?origins_top=5&origins_sort=v4')).body;
    for (const k of ['captured_at', 'summary', 'origins']) expect(dashboard.routing[k], k).to.deep.equal(routing[k]);
    expect(dashboard.routing.origins.map((o: { asn: number }) => o.asn)).to.have.members([4242420011, 4242420013, 4242420012]);
    expect(dashboard.routing.captured_at).to.equal('2026-11-02T10:10:00.000Z');
    const plain = (await h.admin.get('/ui/dashboard?origins_top=5&origins_sort=v4')).body;
    expect(plain.routing.trend).to.deep.equal(routing.trend);
    expect(plain.traffic).to.deep.equal((await h.admin.get('/ui/fleet/traffic')).body);
    expect(dashboard.peering_issues).to.deep.equal((await h.admin.get('/ui/fleet/peering-issues')).body);
  });

  it('caches 3 s per full URL: the same generated_at within, a new one for another URL or after', async () => {
    h.sys.clock.current = new Date('2026-11-02T11:00:00Z');
    const first = (await h.admin.get('/ui/dashboard?range=24h')).body;
    h.sys.clock.advance(2999);
    expect((await h.admin.get('/ui/dashboard?range=24h')).body).to.deep.equal(first);
    expect((await h.admin.get('/ui/dashboard?range=24h&compare=0')).body.generated_at).to.equal('2026-11-02T11:00:02.999Z');
    h.sys.clock.advance(1);
    expect((await h.admin.get('/ui/dashboard?range=24h')).body.generated_at).to.equal('2026-11-02T11:00:03.000Z');
  });

  it('refuses every parameter out of its range (422)', async () => {
    for (const q of [
      'origins_top=201',
      'origins_top=0',
      'traffic_limit=0',
      'traffic_limit=201',
      'breakdown_top=201',
      'as_traffic=2',
      'origins_sort=name',
      'range=1h',
      'compare=2',
      'bogus=1',
    ]) {
      expectResponse(await h.admin.get(`/ui/dashboard?${q}`)).status(422);
    }
    expectResponse(await h.admin.get('/ui/dashboard?origins_top=200&traffic_limit=200&breakdown_top=200&as_traffic=1&range=30d&compare=1')).status(200);
  });

  it('builds peering_issues as /ui/fleet/peering-issues does', async () => {
    h.sys.clock.current = new Date('2026-11-02T10:20:00Z');
    const body = snapshot('d2', { ebgp_x: 'idle', ibgp_d1_v4: 'active', ebgp_y: 'established' }, { captured_at: '2026-11-02T10:20:00Z' });
    expectResponse(await h.agent.d2.post('/agent/runtime-snapshot', body)).status(200);
    const dashboard = (await h.admin.get('/ui/dashboard?range=6h')).body;
    const issues = (await h.admin.get('/ui/fleet/peering-issues')).body;
    expect(issues.map((i: { name: string; issue: string }) => `${i.issue} ${i.name}`)).to.deep.equal(['down ebgp_x', 'connecting ibgp_d1_v4']);
    expect(dashboard.peering_issues).to.deep.equal(issues);
  });
});
