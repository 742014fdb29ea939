import { expect } from 'chai';
import { setTarget, uploadRelease } from '../../../../commands/releases.js';
import { buildFleetOverview } from '../../../../http/control/ui/views/overview.js';
import { buildTrafficBreakdown } from '../../../../http/control/shared/traffic-breakdown.js';
import { expectResponse } from '../../../support/http.js';
import { reconciliation, startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { at, byId, heartbeat, KEY_A, KEY_B, postSnapshot, postTraffic } from './support.js';

const FRANKFURT = { lat: 50.1, lon: 8.7, city: 'Frankfurt', country: 'DE', region: 41 };

const NODE_FIELDS = [
  'node_id',
  'asn',
  'router_id',
  'site',
  'loopback_ipv4',
  'loopback_ipv6',
  'link_local',
  'ipv4_prefixes',
  'ipv6_prefixes',
  'labels',
  'current_generation',
  'lifecycle',
  'dns_group_id',
  'wireguard_public_key',
  'created_at',
  'updated_at',
];
const CONSOLE_FIELDS = [
  'health',
  'liveness',
  'agent_version',
  'agent_up_to_date',
  'last_heartbeat_at',
  'drift_count',
  'peers_up',
  'peers_total',
  'rx_bytes_per_sec',
  'tx_bytes_per_sec',
  'geo',
];

describe('Console fleet views (/ui/fleet/overview, /ui/nodes, /ui/fleet/traffic-breakdown)', function () {
  this.timeout(60_000);
  let h: AgentHarness;

  before(async () => {
    h = await startAgents(['n1', 'n2', 'n3']);
    // n2 names its own region (44), which overrides Frankfurt's (41).
    expectResponse(await h.admin.patch('/admin/nodes/n2', { labels: { region: 44 } })).status(200);
    at(h, '2026-11-01T12:00:00Z');
    await postSnapshot(h, 'n1');
    await postSnapshot(h, 'n2', {}, { p1: 'established', p2: 'idle' });
    expectResponse(await h.agent.n1.post('/agent/reconciliation-report', reconciliation('n1'))).status(200);
    await heartbeat(h, 'n1', '1.0.200');
  });
  after(async () => h?.close());

  describe('/ui/fleet/overview', () => {
    it('shows every node with health, liveness and geo (own region first), summary counts and a top-level agent_summary', async () => {
      const res = await h.admin.get('/ui/fleet/overview');
      expectResponse(res).status(200);
      expect(res.body.summary).to.deep.equal({ total: 3, ok: 1, degraded: 1, stale: 0, down: 0, unknown: 1 });
      expect(res.body.agent_summary).to.deep.equal({ online: 1, stale: 0, offline: 2, agents_behind: 0 });
      expect(res.body.summary).to.not.have.property('agent_summary');
      const rows = byId(res.body.nodes);
      expect(rows.n1).to.deep.include({ health: 'ok', liveness: 'online', agent_version: '1.0.200', drift_count: 2, region: 41 });
      expect(rows.n1.geo).to.deep.equal(FRANKFURT);
      expect(rows.n2).to.deep.include({ health: 'degraded', liveness: 'offline', drift_count: 0, region: 44 });
      expect(rows.n2.geo.region).to.equal(44);
      expect(rows.n3).to.deep.include({ health: 'unknown', liveness: 'offline', agent_version: null, last_heartbeat_at: null, drift_count: 0 });
      expect(res.body.links).to.deep.equal([]);
    });

    it('is what the dashboard builder answers at the same instant', async () => {
      const res = await h.admin.get('/ui/fleet/overview');
      expect(res.body).to.deep.equal(await buildFleetOverview(h.sys.context, h.sys.clock.now()));
    });

    it('moves a node online → stale → offline at 75 s and 300 s after its heartbeat (server clock)', async () => {
      const beat = h.sys.clock.now().getTime();
      const liveness = async () => byId((await h.admin.get('/ui/fleet/overview')).body.nodes).n1.liveness;
      try {
        for (const [after, expected] of [
          [75, 'online'],
          [76, 'stale'],
          [300, 'stale'],
          [301, 'offline'],
        ] as const) {
          h.sys.clock.current = new Date(beat + after * 1000);
          expect(await liveness(), `${after} s`).to.equal(expected);
        }
      } finally {
        h.sys.clock.current = new Date(beat);
      }
    });
  });

  describe('/ui/nodes', () => {
    it('lists the node fields without base_template and inventory, plus the console fields, by node id', async () => {
      const res = await h.admin.get('/ui/nodes');
      expectResponse(res).status(200);
      expect(res.body.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['n1', 'n2', 'n3']);
      for (const row of res.body) expect(Object.keys(row)).to.have.members([...NODE_FIELDS, ...CONSOLE_FIELDS]);
    });

    it('gives null for what was never reported and 0 for drift without a report', async () => {
      const rows = byId((await h.admin.get('/ui/nodes')).body);
      expect(rows.n3).to.deep.include({
        health: 'unknown',
        liveness: 'offline',
        agent_version: null,
        agent_up_to_date: null,
        last_heartbeat_at: null,
        drift_count: 0,
        peers_up: null,
        peers_total: null,
        rx_bytes_per_sec: null,
        tx_bytes_per_sec: null,
      });
      expect(rows.n3.geo).to.deep.equal(FRANKFURT);
      expect(rows.n1).to.deep.include({ health: 'ok', liveness: 'online', agent_version: '1.0.200', drift_count: 2, peers_up: 2, peers_total: 2 });
      expect(rows.n1.last_heartbeat_at).to.equal(h.sys.clock.now().toISOString());
      expect(rows.n2).to.deep.include({ health: 'degraded', peers_up: 1, peers_total: 2, drift_count: 0 });
      expect(rows.n2.geo.region).to.equal(44);
    });

    it('says whether each agent runs the target version once a target is set', async () => {
      const deps = { pool: h.sys.pool, doorbell: h.sys.doorbell, now: h.sys.clock.now };
      await uploadRelease(deps, '1.0.201', [{ filename: 'dn42-agent-1.0.201.tgz', content: Buffer.from('agent 1.0.201') }]);
      await setTarget(deps, '1.0.201');
      const rows = byId((await h.admin.get('/ui/nodes')).body);
      expect(rows.n1.agent_up_to_date).to.equal(false);
      expect(rows.n3.agent_up_to_date).to.equal(null);
      expect((await h.admin.get('/ui/fleet/overview')).body.agent_summary.agents_behind).to.equal(1);
      await heartbeat(h, 'n1', '1.0.201');
      expect(byId((await h.admin.get('/ui/nodes')).body).n1.agent_up_to_date).to.equal(true);
      expect((await h.admin.get('/ui/fleet/overview')).body.agent_summary.agents_behind).to.equal(0);
    });
  });

  describe('/ui/fleet/traffic-breakdown', () => {
    it('has no rates before two samples: null, not 0', async () => {
      const res = await h.admin.get('/ui/fleet/traffic-breakdown');
      expectResponse(res).status(200);
      expect(res.body.totals).to.deep.equal({ rx_bytes_per_sec: null, tx_bytes_per_sec: null });
      expect(res.body.nodes.map((n: { rx_bytes_per_sec: unknown }) => n.rx_bytes_per_sec)).to.deep.equal([null, null, null]);
      expect(res.body.peers).to.deep.equal([]);
      expect(res.body.peer_total).to.equal(0);
    });

    it('gives current rates per node and per peer from the latest two samples, busiest first', async () => {
      at(h, '2026-11-01T12:10:00Z');
      await postTraffic(h, 'n1', [
        { interface: 'dn42_p1', public_key: KEY_A, rx_bytes: 1_000, tx_bytes: 2_000 },
        { interface: 'dn42_p2', public_key: KEY_B, rx_bytes: 50_000, tx_bytes: 60_000 },
      ]);
      await postTraffic(h, 'n2', [{ interface: 'dn42_p1', public_key: KEY_A, rx_bytes: 0, tx_bytes: 0 }]);
      at(h, '2026-11-01T12:10:30Z');
      await postTraffic(h, 'n1', [
        { interface: 'dn42_p1', public_key: KEY_A, rx_bytes: 4_000, tx_bytes: 5_000 },
        { interface: 'dn42_p2', public_key: KEY_B, rx_bytes: 50_300, tx_bytes: 60_600 },
      ]);
      const res = await h.admin.get('/ui/fleet/traffic-breakdown');
      expectResponse(res).status(200);
      expect(res.body.nodes[0]).to.deep.equal({
        node_id: 'n1',
        geo: FRANKFURT,
        sampled_at: '2026-11-01T12:10:30.000Z',
        interval_seconds: 30,
        rx_bytes_per_sec: 110,
        tx_bytes_per_sec: 120,
        peer_count: 2,
      });
      // n2 has one sample: listed, without rates, after the measured node.
      expect(res.body.nodes.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['n1', 'n2', 'n3']);
      expect(res.body.nodes[1]).to.deep.include({ node_id: 'n2', rx_bytes_per_sec: null, interval_seconds: null, peer_count: 1 });
      expect(res.body.nodes[2]).to.deep.include({ node_id: 'n3', sampled_at: null, rx_bytes_per_sec: null, peer_count: 0 });
      expect(res.body.totals).to.deep.equal({ rx_bytes_per_sec: 110, tx_bytes_per_sec: 120 });
      expect(res.body.other).to.deep.equal({ node_count: 0, rx_bytes_per_sec: null, tx_bytes_per_sec: null });
      expect(res.body.peers.slice(0, 2)).to.deep.equal([
        { node_id: 'n1', geo: FRANKFURT, interface: 'dn42_p1', public_key: KEY_A, rx_bytes_per_sec: 100, tx_bytes_per_sec: 100, reset: false, peering: null },
        { node_id: 'n1', geo: FRANKFURT, interface: 'dn42_p2', public_key: KEY_B, rx_bytes_per_sec: 10, tx_bytes_per_sec: 20, reset: false, peering: null },
      ]);
      expect(res.body.peers[2]).to.deep.include({ node_id: 'n2', rx_bytes_per_sec: null });
      // Every row with a node carries geo; n2 names its own region.
      expect(res.body.peers[2].geo).to.deep.equal({ ...FRANKFURT, region: 44 });
      expect(res.body.peer_total).to.equal(3);
      expect(res.body).to.deep.equal(await buildTrafficBreakdown(h.sys.context, h.sys.clock.now()));
      // The node list shows the same current rates.
      const rows = byId((await h.admin.get('/ui/nodes')).body);
      expect(rows.n1).to.deep.include({ rx_bytes_per_sec: 110, tx_bytes_per_sec: 120 });
      expect(rows.n2).to.deep.include({ rx_bytes_per_sec: null, tx_bytes_per_sec: null });
    });

    it('counts a counter that went down (interface restart) from zero: no negative rate, no spike', async () => {
      at(h, '2026-11-01T12:11:00Z');
      await postTraffic(h, 'n1', [
        { interface: 'dn42_p1', public_key: KEY_A, rx_bytes: 600, tx_bytes: 300 },
        { interface: 'dn42_p2', public_key: KEY_B, rx_bytes: 50_600, tx_bytes: 61_200 },
      ]);
      const res = await h.admin.get('/ui/fleet/traffic-breakdown');
      const p1 = res.body.peers.find((p: { node_id: string; interface: string }) => p.node_id === 'n1' && p.interface === 'dn42_p1');
      expect(p1).to.deep.include({ rx_bytes_per_sec: 20, tx_bytes_per_sec: 10, reset: true });
      expect(res.body.nodes[0]).to.deep.include({ node_id: 'n1', rx_bytes_per_sec: 30, tx_bytes_per_sec: 30 });
      for (const p of res.body.peers) if (p.rx_bytes_per_sec !== null) expect(p.rx_bytes_per_sec).to.be.at.least(0);
    });

    it('lists breakdown_top nodes and sums the rest into other; peers_limit peers', async () => {
      at(h, '2026-11-01T12:11:30Z');
      await postTraffic(h, 'n2', [{ interface: 'dn42_p1', public_key: KEY_A, rx_bytes: 30, tx_bytes: 60 }]);
      const res = await h.admin.get('/ui/fleet/traffic-breakdown?breakdown_top=1&peers_limit=1');
      expectResponse(res).status(200);
      expect(res.body.nodes.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['n1']);
      // n2 measured 30 B over 90 s, n3 nothing: other sums the measured one.
      expect(res.body.other).to.deep.equal({ node_count: 2, rx_bytes_per_sec: 0.33, tx_bytes_per_sec: 0.67 });
      expect(res.body.totals).to.deep.equal({ rx_bytes_per_sec: 30.33, tx_bytes_per_sec: 30.67 });
      expect(res.body.peers).to.have.length(1);
      expect(res.body.peer_total).to.equal(3);
    });

    it('stops calling rates current 300 s after the latest sample of a node (server clock)', async () => {
      const node = async (id: string) => byId((await h.admin.get('/ui/fleet/traffic-breakdown')).body.nodes)[id];
      at(h, '2026-11-01T12:16:00Z'); // n1's latest sample is 300 s old, n2's 270 s
      expect(await node('n1')).to.deep.include({ rx_bytes_per_sec: 30, sampled_at: '2026-11-01T12:11:00.000Z' });
      at(h, '2026-11-01T12:16:01Z');
      expect(await node('n1')).to.deep.include({
        rx_bytes_per_sec: null,
        tx_bytes_per_sec: null,
        interval_seconds: null,
        sampled_at: '2026-11-01T12:11:00.000Z',
      });
      expect((await node('n2')).rx_bytes_per_sec).to.equal(0.33);
      expect(byId((await h.admin.get('/ui/nodes')).body).n1).to.deep.include({ rx_bytes_per_sec: null, tx_bytes_per_sec: null });
      at(h, '2026-11-01T12:11:30Z');
    });

    it('refuses peers_limit and breakdown_top outside 1..200 (422) and accepts the bounds', async () => {
      for (const q of ['peers_limit=0', 'peers_limit=201', 'peers_limit=x', 'breakdown_top=0', 'breakdown_top=201', 'bogus=1']) {
        const res = await h.admin.get(`/ui/fleet/traffic-breakdown?${q}`);
        expectResponse(res).status(422).detail('request validation failed');
        expect(res.body.detail.errors).to.be.an('array').that.is.not.empty;
      }
      for (const q of ['peers_limit=1', 'peers_limit=200', 'breakdown_top=200'])
        expectResponse(await h.admin.get(`/ui/fleet/traffic-breakdown?${q}`)).status(200);
    });
  });

  it('answers 401 without a token', async () => {
    for (const path of ['/ui/fleet/overview', '/ui/nodes', '/ui/fleet/traffic-breakdown']) {
      const res = await fetch(`${h.url}/control/v1${path}`);
      expect(res.status, path).to.equal(401);
    }
  });
});
