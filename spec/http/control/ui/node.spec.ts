import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { applyResult, reconciliation, startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { at, KEY_A, KEY_B, postSnapshot } from './support.js';

const FRANKFURT = { lat: 50.1, lon: 8.7, city: 'Frankfurt', country: 'DE', region: 41 };

describe('Console node views (/ui/nodes/{id}/overview, status events, links)', function () {
  this.timeout(60_000);
  let h: AgentHarness;

  before(async () => {
    h = await startAgents(['n1', 'n2']);
    const group = await h.admin.post('/admin/dns-groups', { name: 'anycast', bind_addresses: ['172.20.0.53'], forwards: [] });
    expectResponse(group).status(201);
    expectResponse(await h.admin.put('/admin/nodes/n1/dns-group', { dns_group_id: group.body.id })).status(200);
  });
  after(async () => h?.close());

  describe('/ui/nodes/{id}/overview', () => {
    it('answers 404 for an unknown node', async () => {
      expectResponse(await h.admin.get('/ui/nodes/ghost/overview'))
        .status(404)
        .detail('unknown node ghost');
    });

    it('answers the unknown skeleton with the full node for a node that never reported', async () => {
      const res = await h.admin.get('/ui/nodes/n2/overview');
      expectResponse(res).status(200);
      const node = (await h.admin.get('/admin/nodes/n2')).body;
      expect(res.body).to.deep.include({
        node_id: 'n2',
        health: 'unknown',
        reasons: [],
        liveness: 'offline',
        last_heartbeat_at: null,
        agent_version: null,
        agent_up_to_date: null,
        snapshot_at: null,
        bgp_established: null,
        bgp_total: null,
        drift_count: 0,
        snapshot: null,
        report: null,
        apply: null,
        node,
        dns_group: null,
        geo: FRANKFURT,
      });
      expect(res.body.node).to.include.keys('base_template', 'inventory');
      expect(res.body.trends).to.deep.equal({
        self_metrics: { current: null, series: [] },
        drift: { current: null, series: [] },
        apply: { total: 0, succeeded: 0, last_status: null, last_at: null, series: [] },
      });
      expect(res.body).to.not.have.property('peerings');
    });

    it('shows the latest reports, the DNS group and trends of the last 24 h, oldest first', async () => {
      at(h, '2026-11-01T12:00:00Z');
      await postSnapshot(h, 'n1');
      at(h, '2026-11-01T12:06:00Z');
      const metrics = {
        cpu: 7.25,
        rss: 104_857_600,
        total_failures: 0,
        log_warning_count: 0,
        log_error_count: 0,
        last_error_at: null,
        last_error_message: null,
        last_routing_collect_seconds: 1.5,
      };
      await postSnapshot(h, 'n1', { self_metrics: metrics });
      expectResponse(await h.agent.n1.post('/agent/reconciliation-report', reconciliation('n1'))).status(200);
      at(h, '2026-11-01T12:07:00Z');
      expectResponse(await h.agent.n1.post('/agent/apply-result', applyResult('n1'))).status(200);
      at(h, '2026-11-01T12:08:00Z');
      expectResponse(await h.agent.n1.post('/agent/apply-result', applyResult('n1', 'failed', 2))).status(200);
      expectResponse(await h.agent.n1.post('/agent/reconciliation-report', reconciliation('n1', 'in_sync'))).status(200);

      const res = await h.admin.get('/ui/nodes/n1/overview');
      expectResponse(res).status(200);
      expect(res.body).to.deep.include({
        node_id: 'n1',
        health: 'degraded',
        reasons: ['last apply failed'],
        liveness: 'offline',
        bgp_established: 2,
        bgp_total: 2,
        drift_count: 0,
      });
      expect(res.body.dns_group).to.deep.equal({ id: res.body.node.dns_group_id, name: 'anycast' });
      expect(res.body.snapshot).to.deep.include({ node_id: 'n1', received_at: '2026-11-01T12:06:00.000Z' });
      expect(res.body.report).to.deep.include({ status: 'in_sync' });
      expect(res.body.apply).to.deep.include({ status: 'failed', generation: 2 });
      expect(res.body.trends).to.deep.equal({
        self_metrics: {
          current: { at: '2026-11-01T12:06:00.000Z', cpu_percent: 7.25, rss_mb: 100, last_routing_collect_seconds: 1.5, last_reresolve_seconds: null },
          series: [
            { at: '2026-11-01T12:00:00.000Z', cpu_percent: 1.5, rss_mb: 47.7, last_routing_collect_seconds: null, last_reresolve_seconds: null },
            { at: '2026-11-01T12:06:00.000Z', cpu_percent: 7.25, rss_mb: 100, last_routing_collect_seconds: 1.5, last_reresolve_seconds: null },
          ],
        },
        drift: {
          current: 0,
          series: [
            { at: '2026-11-01T12:06:00.000Z', count: 2 },
            { at: '2026-11-01T12:08:00.000Z', count: 0 },
          ],
        },
        apply: {
          total: 2,
          succeeded: 1,
          last_status: 'failed',
          last_at: '2026-11-01T12:08:00.000Z',
          series: [
            { at: '2026-11-01T12:07:00.000Z', status: 'succeeded' },
            { at: '2026-11-01T12:08:00.000Z', status: 'failed' },
          ],
        },
      });
    });

    it('drops what is older than 24 h from the series and keeps the current values', async () => {
      const now = h.sys.clock.now().getTime();
      try {
        h.sys.clock.current = new Date(Date.parse('2026-11-01T12:06:00Z') + 24 * 3_600_000 + 1000);
        const trends = (await h.admin.get('/ui/nodes/n1/overview')).body.trends;
        expect(trends.self_metrics.series).to.deep.equal([]);
        expect(trends.self_metrics.current.at).to.equal('2026-11-01T12:06:00.000Z');
        expect(trends.drift).to.deep.equal({ current: 0, series: [{ at: '2026-11-01T12:08:00.000Z', count: 0 }] });
        expect(trends.apply).to.deep.include({ total: 2, last_status: 'failed' });
      } finally {
        h.sys.clock.current = new Date(now);
      }
    });
  });

  describe('/ui/nodes/{id}/status-events and /ui/status-events/{event_id}', () => {
    const list = async (query = '') => {
      const res = await h.admin.get(`/ui/nodes/n1/status-events${query}`);
      expectResponse(res).status(200);
      return res.body.events as {
        id: number;
        kind: string;
        generation: number | null;
        status: string | null;
        created_at: string;
        drift_count: number | null;
      }[];
    };

    it('lists lean rows newest first, without payload', async () => {
      const events = await list();
      expect(events.map((e) => e.kind)).to.deep.equal(['report', 'apply', 'apply', 'report', 'snapshot', 'snapshot']);
      for (const e of events) expect(Object.keys(e)).to.have.members(['id', 'kind', 'generation', 'status', 'created_at', 'drift_count']);
      expect(events[1]).to.deep.include({ kind: 'apply', generation: 2, status: 'failed', drift_count: null, created_at: '2026-11-01T12:08:00.000Z' });
      expect(events[3]).to.deep.include({ kind: 'report', status: 'drift', drift_count: 2 });
      const ids = events.map((e) => e.id);
      expect(ids).to.deep.equal([...ids].sort((a, b) => b - a));
    });

    it('pages with before_id and filters by kind', async () => {
      const all = await list();
      const first = await list('?limit=2');
      expect(first).to.deep.equal(all.slice(0, 2));
      const second = await list(`?limit=2&before_id=${first[1].id}`);
      expect(second).to.deep.equal(all.slice(2, 4));
      const rest = await list(`?limit=500&before_id=${second[1].id}`);
      expect(rest).to.deep.equal(all.slice(4));
      expect(await list(`?before_id=${all[all.length - 1].id}`)).to.deep.equal([]);
      expect((await list('?kind=apply')).map((e) => e.status)).to.deep.equal(['failed', 'succeeded']);
      expect(await list('?kind=reresolve')).to.deep.equal([]);
    });

    it('takes 100 rows unless told otherwise', async () => {
      for (let i = 0; i < 101; i++) expectResponse(await h.agent.n2.post('/agent/reconciliation-report', reconciliation('n2', 'in_sync'))).status(200);
      expect((await h.admin.get('/ui/nodes/n2/status-events')).body.events).to.have.length(100);
      expect((await h.admin.get('/ui/nodes/n2/status-events?limit=500')).body.events).to.have.length(101);
    });

    it('refuses limits outside 1..500, a bad cursor or kind (422) and an unknown node (404)', async () => {
      // A cursor past 2^53 - 1 is refused, not handed to the database (a bigint overflow was a 500).
      for (const q of ['limit=0', 'limit=501', 'limit=two', 'before_id=0', 'before_id=x', 'before_id=99999999999999999999', 'kind=bogus', 'other=1']) {
        const res = await h.admin.get(`/ui/nodes/n1/status-events?${q}`);
        expectResponse(res).status(422).detail('request validation failed');
        expect(res.body.detail.errors[0].loc[0], q).to.equal('query');
      }
      expectResponse(await h.admin.get('/ui/nodes/ghost/status-events'))
        .status(404)
        .detail('unknown node ghost');
    });

    it('gives one event in full with its payload, and 404 for an unknown id', async () => {
      const [report] = await list('?kind=report&limit=1');
      const res = await h.admin.get(`/ui/status-events/${report.id}`);
      expectResponse(res).status(200);
      expect(res.body).to.deep.include({ ...report, node_id: 'n1' });
      expect(res.body.payload).to.deep.include({ node_id: 'n1', status: 'in_sync', drift_items: [] });
      expectResponse(await h.admin.get('/ui/status-events/999999999'))
        .status(404)
        .detail('unknown status event 999999999');
      expectResponse(await h.admin.get('/ui/status-events/abc')).status(422);
      expectResponse(await h.admin.get('/ui/status-events/0')).status(422);
      expectResponse(await h.admin.get('/ui/status-events/99999999999999999999'))
        .status(422)
        .detail('request validation failed');
      expectResponse(await h.admin.get(`/ui/status-events/${Number.MAX_SAFE_INTEGER}`))
        .status(404)
        .detail(`unknown status event ${Number.MAX_SAFE_INTEGER}`);
    });
  });

  describe('/ui/nodes/{id}/links', () => {
    it('answers 404 for a node without a runtime snapshot and for an unknown node', async () => {
      expectResponse(await h.admin.get('/ui/nodes/n2/links'))
        .status(404)
        .detail('no runtime status reported for node n2');
      expectResponse(await h.admin.get('/ui/nodes/ghost/links'))
        .status(404)
        .detail('unknown node ghost');
    });

    it('grades each WireGuard peer up, stale or down by handshake age at the server clock', async () => {
      at(h, '2026-11-01T13:00:00Z');
      const peer = (public_key: string, handshake: string | null) => ({
        public_key,
        endpoint: '192.0.2.1:51820',
        latest_handshake_at: handshake,
        rx_bytes: 10,
        tx_bytes: 20,
      });
      await postSnapshot(h, 'n1', {
        wireguard_interfaces: [
          { name: 'dn42_a', public_key: KEY_A, listen_port: 51801, peers: [peer(KEY_B, '2026-11-01T12:57:00Z')] },
          { name: 'dn42_b', public_key: KEY_A, listen_port: 51802, peers: [peer(KEY_B, '2026-11-01T12:56:59Z')] },
          { name: 'dn42_c', public_key: KEY_A, listen_port: 51803, peers: [peer(KEY_B, '2026-11-01T12:50:00Z')] },
          { name: 'dn42_d', public_key: KEY_A, listen_port: 51804, peers: [peer(KEY_B, '2026-11-01T12:49:59Z')] },
          { name: 'dn42_e', public_key: KEY_A, listen_port: 51805, peers: [peer(KEY_B, null)] },
          { name: 'dn42_f', public_key: KEY_A, listen_port: 51806, peers: [] },
        ],
      });
      const res = await h.admin.get('/ui/nodes/n1/links');
      expectResponse(res).status(200);
      expect(res.body).to.deep.include({
        node_id: 'n1',
        captured_at: '2026-11-01T13:00:00.000Z',
        received_at: '2026-11-01T13:00:00.000Z',
        thresholds: { up_seconds: 180, stale_seconds: 600 },
      });
      expect(
        res.body.links.map((l: { interface: string; state: string; handshake_age_seconds: number | null }) => [l.interface, l.state, l.handshake_age_seconds]),
      ).to.deep.equal([
        ['dn42_a', 'up', 180],
        ['dn42_b', 'stale', 181],
        ['dn42_c', 'stale', 600],
        ['dn42_d', 'down', 601],
        ['dn42_e', 'down', null],
        ['dn42_f', 'down', null],
      ]);
      expect(res.body.summary).to.deep.equal({ up: 1, stale: 2, down: 3 });
      expect(res.body.links[0]).to.deep.equal({
        interface: 'dn42_a',
        peer_public_key: KEY_B,
        endpoint: '192.0.2.1:51820',
        latest_handshake_at: '2026-11-01T12:57:00.000Z',
        handshake_age_seconds: 180,
        state: 'up',
        rx_bytes: 10,
        tx_bytes: 20,
        peering: null,
      });
      expect(res.body.links[5]).to.deep.include({ peer_public_key: null, latest_handshake_at: null, rx_bytes: null });
    });

    it('ages the links with the server clock when no newer snapshot comes', async () => {
      at(h, '2026-11-01T13:10:00Z');
      const res = await h.admin.get('/ui/nodes/n1/links');
      expect(res.body.summary).to.deep.equal({ up: 0, stale: 0, down: 6 });
    });

    it('names the peering of an interface that belongs to one', async () => {
      const created = await h.admin.post('/admin/nodes/n1/peerings', { name: 'peer-a', remote_asn: 4242420002 });
      expectResponse(created).status(201);
      const iface = await h.admin.post('/admin/nodes/n1/interfaces', { spec: { name: 'dn42_a', kind: 'wireguard' }, peering_id: created.body.id });
      expectResponse(iface).status(201);
      const res = await h.admin.get('/ui/nodes/n1/links');
      expect(res.body.links[0].peering).to.deep.equal({
        id: created.body.id,
        name: 'peer-a',
        remote_asn: 4242420002,
        remote_node_id: null,
        is_internal: false,
      });
    });
  });

  describe('/ui/nodes/{id}/overview trends of a busy day', () => {
    let busy: AgentHarness;
    before(async () => {
      busy = await startAgents(['b1']);
      // 205 snapshots and reconciliation reports 5 minutes apart (17 h, inside the 24 h window): more than a series may hold.
      for (let i = 0; i < 205; i++) {
        const t = at(busy, new Date(Date.parse('2026-11-01T00:00:00Z') + i * 300_000).toISOString());
        await postSnapshot(busy, 'b1', {
          self_metrics: { cpu: i, rss: 50_000_000, total_failures: 0, log_warning_count: 0, log_error_count: 0, last_error_at: null, last_error_message: null },
        });
        expectResponse(await busy.agent.b1.post('/agent/reconciliation-report', { ...reconciliation('b1', 'in_sync'), captured_at: t })).status(200);
      }
    });
    after(async () => busy?.close());

    it('keeps at most 200 points per series (document 3), the newest, oldest first', async () => {
      const { trends } = (await busy.admin.get('/ui/nodes/b1/overview')).body;
      expect(trends.self_metrics.series).to.have.length(200);
      expect(trends.self_metrics.series.map((p: { cpu_percent: number }) => p.cpu_percent)).to.deep.equal(Array.from({ length: 200 }, (_, i) => i + 5));
      expect(trends.drift.series).to.have.length(200);
      expect(trends.drift.series[199].at).to.equal(trends.self_metrics.current.at);
    });
  });
});
