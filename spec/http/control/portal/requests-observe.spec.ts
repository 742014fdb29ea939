import { expect } from 'chai';
import { createControlApp } from '../../../../http/control/app.js';
import { loadConfig } from '../../../../infra/config.js';
import { jobStore } from '../../../../infra/jobs/store.js';
import { pruneTelemetry } from '../../../../infra/telemetry/retention.js';
import { onlineAgentCount } from '../../../../infra/agent-hub/presence.js';
import { agentSocket, type AgentClient } from '../../../support/agent-socket.js';
import { issueAgentToken } from '../../../support/agents.js';
import { api, expectResponse } from '../../../support/http.js';
import { givenPortalSession } from '../../../support/portal.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { eventually } from '../../../support/wait.js';
import { snapshot } from '../agent/telemetry-support.js';
import { ADMIN_TOKEN, node } from '../fleet/support.js';

const GAMMA = 4242420010;
const DELTA = 4242420011;
const KEY = 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
const KEY2 = 'xQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
const IFACE = `dn42_${GAMMA}`;
const epoch = (iso: string) => Date.parse(iso) / 1000;

type Client = ReturnType<typeof api>;

/** A snapshot of fra1 whose request interface has counted these bytes (cumulative). */
function counted(capturedAt: string, rx: number, tx: number) {
  return snapshot(
    'fra1',
    { [`autopeer_${GAMMA}`]: 'established' },
    {
      captured_at: capturedAt,
      interfaces: [{ name: IFACE, up: true, mtu: 1420, rx_bytes: rx, tx_bytes: tx }],
      wireguard_interfaces: [{ name: IFACE, listen_port: 51800, peers: [{ public_key: KEY, latest_handshake_at: capturedAt, rx_bytes: rx, tx_bytes: tx }] }],
    },
  );
}

describe('Portal: observing a request (traffic, probes, metrics, routes)', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  let url: string;
  let admin: Client;
  let portal: Client;
  let gamma: string;
  let delta: string;
  let noAsn: string;
  let id: number;
  const closers: (() => Promise<void>)[] = [];

  before(async () => {
    sys = await createTestSystem({ env: { ADMIN_TOKEN } });
    const config = loadConfig({ DATABASE_URL: sys.db.url, LOG_LEVEL: 'silent', ADMIN_TOKEN });
    const started = await startApp(createControlApp({ ...sys.context, config }));
    closers.push(started.close);
    url = started.url;
    admin = api(`${url}/control/v1`, { token: ADMIN_TOKEN });
    portal = api(`${url}/control/v1`);
    expectResponse(await admin.post('/admin/nodes', node('fra1'))).status(201);
    expectResponse(await admin.put('/admin/autopeering/nodes/fra1', { enabled: true, endpoint_host: 'fra1.example.net', monthly_quota_gb: 500 })).status(200);
    gamma = await givenPortalSession(sys, { asn: GAMMA, mnt: 'GAMMA-MNT' });
    delta = await givenPortalSession(sys, { asn: DELTA, mnt: 'DELTA-MNT' });
    noAsn = await givenPortalSession(sys, { asn: null });
    const created = await portal.post('/autopeering/requests', { node_id: 'fra1', public_key: KEY, endpoint: 'peer.example.net:51820' }, { token: gamma });
    expectResponse(created).status(201);
    id = created.body.id;
  });
  after(async () => {
    for (const close of closers.reverse()) await close();
    await sys?.close();
  });

  describe('GET /requests/{id}/traffic', () => {
    it('without samples: every point null (not 0), no current rate, zero usage, the quota of the node policy', async () => {
      const res = await portal.get(`/autopeering/requests/${id}/traffic?range=6h`, { token: gamma });
      expectResponse(res).status(200);
      expect(res.body).to.deep.include({ request_id: id, node_id: 'fra1', interface: IFACE, range: '6h', bucket_seconds: 300, current: null });
      expect(res.body.points).to.have.length(72);
      expect(res.body.points.every((p: { rx_bytes_per_sec: unknown }) => p.rx_bytes_per_sec === null)).to.equal(true);
      expect(res.body.usage.monthly_quota_gb).to.equal(500);
      expect(res.body.usage.month).to.deep.include({ rx_bytes: 0, tx_bytes: 0, from: epoch('2026-11-01T00:00:00Z') });
    });

    it('rates of the interface on the grid with epoch-second times, a measured idle bucket 0 beside an unmeasured null; usage and current rate', async () => {
      const { token } = await issueAgentToken(url, ADMIN_TOKEN, 'fra1');
      const agent = api(`${url}/control/v1`, { token });
      sys.clock.current = new Date('2026-11-01T12:02:00Z');
      // 11:55 base; 11:59 +240 kB rx, +480 kB tx; 12:01 nothing more: the 11:55 bucket measured 300 s (800 and 1600 B/s), the 12:00 bucket 60 idle s (0 B/s).
      for (const [at, rx, tx] of [
        ['2026-11-01T11:55:00Z', 1_000_000, 2_000_000],
        ['2026-11-01T11:59:00Z', 1_240_000, 2_480_000],
        ['2026-11-01T12:01:00Z', 1_240_000, 2_480_000],
      ] as const) {
        expectResponse(await agent.post('/agent/runtime-snapshot', counted(at, rx, tx))).status(200);
        await sys.context.background.drain(); // the archives are written after the answer
      }
      const res = await portal.get(`/autopeering/requests/${id}/traffic?range=6h`, { token: gamma });
      expectResponse(res).status(200);
      const points = res.body.points as { t: number }[];
      expect(points[points.length - 1].t).to.equal(epoch('2026-11-01T12:00:00Z'));
      expect(points.slice(-3)).to.deep.equal([
        { t: epoch('2026-11-01T11:50:00Z'), rx_bytes_per_sec: null, tx_bytes_per_sec: null },
        { t: epoch('2026-11-01T11:55:00Z'), rx_bytes_per_sec: 800, tx_bytes_per_sec: 1600 },
        { t: epoch('2026-11-01T12:00:00Z'), rx_bytes_per_sec: 0, tx_bytes_per_sec: 0 },
      ]);
      expect(res.body.current).to.deep.equal({ t: epoch('2026-11-01T12:00:00Z'), rx_bytes_per_sec: 0, tx_bytes_per_sec: 0 });
      const end = epoch('2026-11-01T12:05:00Z');
      expect(res.body.usage).to.deep.equal({
        hour: { from: end - 3600, to: end, rx_bytes: 240_000, tx_bytes: 480_000 },
        day: { from: end - 86_400, to: end, rx_bytes: 240_000, tx_bytes: 480_000 },
        month: { from: epoch('2026-11-01T00:00:00Z'), to: end, rx_bytes: 240_000, tx_bytes: 480_000 },
        monthly_quota_gb: 500,
      });
    });

    it('takes the four observation ranges (default 24h) and answers 422 for any other', async () => {
      for (const [range, width, points] of [
        ['6h', 300, 72],
        ['24h', 600, 144],
        ['7d', 3600, 168],
        ['30d', 14_400, 180],
      ] as const) {
        const res = await portal.get(`/autopeering/requests/${id}/traffic?range=${range}`, { token: gamma });
        expectResponse(res).status(200);
        expect([res.body.bucket_seconds, res.body.points.length]).to.deep.equal([width, points]);
      }
      expect((await portal.get(`/autopeering/requests/${id}/traffic`, { token: gamma })).body.range).to.equal('24h');
      for (const range of ['1h', '90d', ''])
        expectResponse(await portal.get(`/autopeering/requests/${id}/traffic?range=${range}`, { token: gamma })).status(422);
      expectResponse(await portal.get(`/autopeering/requests/${id}/traffic?range=6h&x=1`, { token: gamma })).status(422);
    });

    it("another AS's request and an unknown one answer 404; no session 401; no verified ASN 403", async () => {
      expectResponse(await portal.get(`/autopeering/requests/${id}/traffic`, { token: delta }))
        .status(404)
        .detail(`unknown autopeering request ${id}`);
      expectResponse(await portal.get(`/autopeering/requests/999999/traffic`, { token: gamma })).status(404);
      expectResponse(await portal.get(`/autopeering/requests/${id}/traffic`)).status(401);
      expectResponse(await portal.get(`/autopeering/requests/${id}/traffic`, { token: ADMIN_TOKEN })).status(401);
      expectResponse(await portal.get(`/autopeering/requests/${id}/traffic`, { token: noAsn })).status(403);
    });
  });
  describe('POST /requests/{id}/probe-mtu and /probe-latency', () => {
    let agentToken: string;
    let channel: AgentClient;
    const probe = (kind: 'mtu' | 'latency', token = gamma, which = id) => portal.post(`/autopeering/requests/${which}/probe-${kind}`, {}, { token });
    /** The agent's side of the next probe job: takes its doorbell, opens the job stream, sends the lines and `done`. Resolves with the spec. */
    async function answerNext(lines: string[], done: Record<string, unknown> = { exit_code: 0 }) {
      const request = await channel.next('probe_request', 10_000);
      const stream = agentSocket(url, `probe-stream/${request.probe_id}`, agentToken);
      await new Promise((resolve) => stream.ws.once('open', resolve));
      for (const text of lines) stream.send({ type: 'output', probe_id: request.probe_id, text });
      stream.send({ type: 'done', probe_id: request.probe_id, ...done });
      await stream.closed;
      return request.spec as Record<string, unknown>;
    }
    const at = (iso: string) => (sys.clock.current = new Date(iso));

    before(async () => {
      agentToken = (await issueAgentToken(url, ADMIN_TOKEN, 'fra1')).token;
    });
    after(async () => {
      await channel?.close();
    });

    it('409 while the node has no connected agent (the cooldown stays free)', async () => {
      at('2026-11-01T13:00:00Z');
      for (const kind of ['mtu', 'latency'] as const)
        expectResponse(await probe(kind))
          .status(409)
          .detail('node fra1 has no connected agent');
      channel = agentSocket(url, 'ws/fra1', agentToken);
      await channel.next('hello');
      await eventually(async () => (await onlineAgentCount(sys.pool, 'fra1')) > 0, 5000, 'agent presence');
    });

    it("MTU probe: a DF bisection to the peer's link-local address on its interface up to the tunnel MTU; stored in the detail", async () => {
      const [res, spec] = await Promise.all([
        probe('mtu'),
        answerNext(['MTU bisection to fe80::10', 'payload 1372 (packet 1420): does not pass', 'PMTU_PAYLOAD 1352']),
      ]);
      expect(spec).to.deep.include({ tool: 'mtu', target: 'fe80::10', interface: IFACE, max_size: 1420 });
      expectResponse(res).status(200).body({ status: 'mismatch', pmtu: 1400, mtu: 1420 });
      expect(res.body).to.deep.equal({ status: 'mismatch', pmtu: 1400, mtu: 1420 });
      const detail = await portal.get(`/autopeering/requests/${id}`, { token: gamma });
      expect(detail.body.mtu_probe).to.deep.equal({ status: 'mismatch', pmtu: 1400, mtu: 1420, probed_at: '2026-11-01T13:00:00.000Z' });
      expect(detail.body.latency).to.equal(null);
    });

    it('429 within 10 minutes of the last MTU probe (Retry-After), per request and kind; free again at 10 minutes', async () => {
      const again = await probe('mtu');
      expectResponse(again).status(429).detail('MTU probe cooldown: one per request every 10 minutes; retry in 600 s');
      expect(again.headers.get('retry-after')).to.equal('600');
      at('2026-11-01T13:09:59Z');
      expectResponse(await probe('mtu'))
        .status(429)
        .detail('MTU probe cooldown: one per request every 10 minutes; retry in 1 s');
      at('2026-11-01T13:10:00Z');
      const [res] = await Promise.all([probe('mtu'), answerNext(['MTU bisection to fe80::10', 'PMTU_PAYLOAD 0'])]);
      expectResponse(res).status(200);
      expect(res.body).to.deep.equal({ status: 'unreachable', pmtu: null, mtu: 1420 });
    });

    it('latency probe: a 10-packet ping, its own cooldown; all lost gives null times and 100 % loss', async () => {
      const [res, spec] = await Promise.all([
        probe('latency'),
        answerNext([
          'PING fe80::10%dn42_4242420010 56 data bytes',
          '--- fe80::10%dn42_4242420010 ping statistics ---',
          '10 packets transmitted, 9 received, 10% packet loss, time 9012ms',
          'rtt min/avg/max/mdev = 0.030/0.042/0.060/0.008 ms',
        ]),
      ]);
      expect(spec).to.deep.include({ tool: 'ping', target: 'fe80::10', interface: IFACE, count: 10 });
      expect(res.body).to.deep.equal({ rtt_ms_avg: 0.042, rtt_ms_max: 0.06, loss_pct: 10 });
      expectResponse(await probe('latency')).status(429);
      expect((await portal.get(`/autopeering/requests/${id}`, { token: gamma })).body.latency).to.deep.equal({
        rtt_ms_avg: 0.042,
        rtt_ms_max: 0.06,
        loss_pct: 10,
        probed_at: '2026-11-01T13:10:00.000Z',
      });
      at('2026-11-01T13:20:00Z');
      const [lost] = await Promise.all([probe('latency'), answerNext(['10 packets transmitted, 0 received, 100% packet loss, time 9200ms'])]);
      expect(lost.body).to.deep.equal({ rtt_ms_avg: null, rtt_ms_max: null, loss_pct: 100 });
    });

    it('504 when the agent does not finish within the wait (server clock); the cooldown is taken', async () => {
      at('2026-11-01T13:30:00Z');
      const pending = probe('latency');
      await channel.next('probe_request', 10_000); // the agent got the job and never answers
      at('2026-11-01T13:30:31Z');
      expectResponse(await pending)
        .status(504)
        .detail('the agent did not finish the latency probe in time');
      expectResponse(await probe('latency')).status(429);
    });

    it('504 naming the cause when the agent hangs up before done', async () => {
      at('2026-11-01T13:45:00Z');
      const pending = probe('latency');
      const request = await channel.next('probe_request', 10_000);
      const stream = agentSocket(url, `probe-stream/${request.probe_id}`, agentToken);
      await new Promise((resolve) => stream.ws.once('open', resolve));
      stream.send({ type: 'output', probe_id: request.probe_id, text: 'PING fe80::10' });
      await stream.close();
      expectResponse(await pending)
        .status(504)
        .detail('the agent did not finish the latency probe in time: agent disconnected');
    });

    it('two concurrent calls: one probes, the other gets 429', async () => {
      at('2026-11-01T13:55:00Z');
      const [first, second] = await Promise.all([probe('mtu'), probe('mtu'), answerNext(['PMTU_PAYLOAD 1372'])]);
      expect([first.status, second.status].sort()).to.deep.equal([200, 429]);
      expect(await jobStore.openCount(sys.pool, 'fra1', sys.clock.now())).to.equal(0);
    });

    it("another AS's request 404, no verified ASN 403, a cancelled request 409", async () => {
      at('2026-11-01T14:00:00Z');
      for (const kind of ['mtu', 'latency'] as const) {
        expectResponse(await probe(kind, delta))
          .status(404)
          .detail(`unknown autopeering request ${id}`);
        expectResponse(await probe(kind, noAsn)).status(403);
        expectResponse(await probe(kind, gamma, 999999)).status(404);
      }
    });

    it('runs the MTU probe once after creation, in the background and outside the cooldown', async () => {
      const [created, spec] = await Promise.all([
        portal.post('/autopeering/requests', { node_id: 'fra1', public_key: KEY2, endpoint: 'delta.example.net:51820' }, { token: delta }),
        answerNext(['PMTU_PAYLOAD 1372']),
      ]);
      expectResponse(created).status(201);
      expect(spec).to.deep.include({ tool: 'mtu', target: created.body.link_local, interface: `dn42_${DELTA}`, max_size: 1420 });
      await sys.context.background.drain();
      const detail = await portal.get(`/autopeering/requests/${created.body.id}`, { token: delta });
      expect(detail.body.mtu_probe).to.deep.include({ status: 'ok', pmtu: 1420, mtu: 1420 });
      const [res] = await Promise.all([probe('mtu', delta, created.body.id), answerNext(['PMTU_PAYLOAD 1372'])]);
      expectResponse(res).status(200);

      expectResponse(await portal.delete(`/autopeering/requests/${created.body.id}`, { token: delta })).status(200);
      at('2026-11-01T15:00:00Z');
      expectResponse(await probe('latency', delta, created.body.id))
        .status(409)
        .detail(`autopeering request ${created.body.id} is not provisioned`);
    });
  });
  describe('GET /requests/{id}/metrics', () => {
    const session = `autopeer_${GAMMA}`;
    const counts = (capturedAt: string, protocol: Record<string, unknown>) =>
      snapshot(
        'fra1',
        {},
        { captured_at: capturedAt, bgp_protocols: [{ name: session, state: 'established', since: '2026-11-01T10:00:00Z', remote_asn: GAMMA, ...protocol }] },
      );

    it('route counts per family on the grid: newest per bucket, null where not reported (older agent, no exported counts), 0 kept', async () => {
      sys.clock.current = new Date('2026-11-01T16:02:00Z');
      const { token } = await issueAgentToken(url, ADMIN_TOKEN, 'fra1');
      const agent = api(`${url}/control/v1`, { token });
      for (const snap of [
        counts('2026-11-01T15:50:10Z', {
          routes_imported: 1,
          routes_exported: 1,
          routes_imported_v4: 1,
          routes_imported_v6: 1,
          routes_exported_v4: 1,
          routes_exported_v6: 1,
        }),
        counts('2026-11-01T15:51:00Z', {
          routes_imported: 30,
          routes_exported: 11,
          routes_imported_v4: 10,
          routes_imported_v6: 20,
          routes_exported_v4: 5,
          routes_exported_v6: 6,
        }),
        // An agent before the per-family counts: totals only.
        counts('2026-11-01T15:55:00Z', { routes_imported: 30, routes_exported: 11 }),
        // Imported per family without exported (agents before 1.0.233); no IPv6 route.
        counts('2026-11-01T16:00:00Z', { routes_imported: 12, routes_exported: 11, routes_imported_v4: 12, routes_imported_v6: 0 }),
      ]) {
        expectResponse(await agent.post('/agent/runtime-snapshot', snap)).status(200);
        await sys.context.background.drain();
      }
      const res = await portal.get(`/autopeering/requests/${id}/metrics?range=6h`, { token: gamma });
      expectResponse(res).status(200);
      expect(res.body).to.deep.include({ request_id: id, node_id: 'fra1', sessions: [session], range: '6h', bucket_seconds: 300 });
      expect(res.body.points).to.have.length(72);
      expect(res.body.points.slice(-4)).to.deep.equal([
        { t: epoch('2026-11-01T15:45:00Z'), imported_v4: null, imported_v6: null, exported_v4: null, exported_v6: null },
        { t: epoch('2026-11-01T15:50:00Z'), imported_v4: 10, imported_v6: 20, exported_v4: 5, exported_v6: 6 },
        { t: epoch('2026-11-01T15:55:00Z'), imported_v4: null, imported_v6: null, exported_v4: null, exported_v6: null },
        { t: epoch('2026-11-01T16:00:00Z'), imported_v4: 12, imported_v6: 0, exported_v4: null, exported_v6: null },
      ]);
      const day = await portal.get(`/autopeering/requests/${id}/metrics?range=24h`, { token: gamma });
      expect(day.body.points.slice(-2)).to.deep.equal([
        { t: epoch('2026-11-01T15:50:00Z'), imported_v4: 10, imported_v6: 20, exported_v4: 5, exported_v6: 6 },
        { t: epoch('2026-11-01T16:00:00Z'), imported_v4: 12, imported_v6: 0, exported_v4: null, exported_v6: null },
      ]);
    });

    it('takes the four observation ranges; 422 otherwise; 404 for another AS; 403 without ASN', async () => {
      for (const [range, points] of [
        ['6h', 72],
        ['24h', 144],
        ['7d', 168],
        ['30d', 180],
      ] as const)
        expect((await portal.get(`/autopeering/requests/${id}/metrics?range=${range}`, { token: gamma })).body.points).to.have.length(points);
      expect((await portal.get(`/autopeering/requests/${id}/metrics`, { token: gamma })).body.range).to.equal('24h');
      expectResponse(await portal.get(`/autopeering/requests/${id}/metrics?range=1h`, { token: gamma })).status(422);
      expectResponse(await portal.get(`/autopeering/requests/${id}/metrics`, { token: delta }))
        .status(404)
        .detail(`unknown autopeering request ${id}`);
      expectResponse(await portal.get(`/autopeering/requests/${id}/metrics`, { token: noAsn })).status(403);
    });

    it('the retention job drops archived counts older than 60 days', async () => {
      const rows = async () => (await sys.pool.query(`SELECT count(*)::int AS n FROM session_route_counts`)).rows[0].n as number;
      expect(await rows()).to.equal(2); // the 15:50 and 16:00 buckets; the older agent's snapshot added none
      await pruneTelemetry(sys.pool, new Date('2026-12-31T15:52:00Z'));
      expect(await rows()).to.equal(1);
      await pruneTelemetry(sys.pool, new Date('2026-12-31T16:01:00Z'));
      expect(await rows()).to.equal(0);
    });
  });
  describe('GET /requests/{id}/routes', () => {
    const session = `autopeer_${GAMMA}`;
    const learnt = (prefix: string, protocol = session, origin = GAMMA) => ({
      prefix,
      protocol,
      origin_asn: origin,
      as_path: [origin],
      rpki: 'valid',
      local: false,
    });
    const routes = (query: string, token = gamma) => portal.get(`/autopeering/requests/${id}/routes?${query}`, { token });

    it('without a routing table: captured_at null, no routes', async () => {
      const res = await routes('family=4');
      expectResponse(res).status(200);
      expect(res.body).to.deep.equal({
        request_id: id,
        node_id: 'fra1',
        sessions: [session],
        family: 4,
        captured_at: null,
        total: 0,
        limit: 100,
        offset: 0,
        routes: [],
      });
    });

    it("the peer's routes of one family from the latest table, by prefix, paged (limit 1 to 500, default 100)", async () => {
      sys.clock.current = new Date('2026-11-01T17:00:00Z');
      const { token } = await issueAgentToken(url, ADMIN_TOKEN, 'fra1');
      const agent = api(`${url}/control/v1`, { token });
      const table = [
        learnt('172.20.10.16/28'),
        learnt('fd42:10::/48'),
        learnt('172.20.10.0/28'),
        learnt('172.21.0.0/24', 'ebgp_other', 4242420099),
        learnt('fd42:99::/48', 'ebgp_other', 4242420099),
      ];
      const posted = await agent.post('/agent/routing-table', { node_id: 'fra1', captured_at: '2026-11-01T16:59:00Z', rpki_observed: true, routes: table });
      expectResponse(posted).status(200);
      await sys.context.background.drain();
      const v4 = await routes('family=4');
      expectResponse(v4).status(200);
      expect(v4.body).to.deep.include({ family: 4, captured_at: '2026-11-01T16:59:00.000Z', total: 2, limit: 100, offset: 0 });
      expect(v4.body.routes).to.deep.equal([
        { prefix: '172.20.10.0/28', origin_asn: GAMMA, as_path: [GAMMA], rpki: 'valid' },
        { prefix: '172.20.10.16/28', origin_asn: GAMMA, as_path: [GAMMA], rpki: 'valid' },
      ]);
      expect((await routes('family=6')).body.routes.map((r: { prefix: string }) => r.prefix)).to.deep.equal(['fd42:10::/48']);
      const second = await routes('family=4&limit=1&offset=1');
      expect(second.body).to.deep.include({ total: 2, limit: 1, offset: 1 });
      expect(second.body.routes.map((r: { prefix: string }) => r.prefix)).to.deep.equal(['172.20.10.16/28']);
      expect((await routes('family=4&offset=5')).body).to.deep.include({ total: 2, routes: [] });
      expectResponse(await routes('family=4&limit=500')).status(200);
    });

    it('422 for a missing or other family, a limit outside 1 to 500, a negative offset; 404 for another AS; 403 without ASN', async () => {
      for (const q of ['', 'family=5', 'family=4&limit=0', 'family=4&limit=501', 'family=4&offset=-1', 'family=4&limit=x'])
        expectResponse(await routes(q)).status(422);
      expectResponse(await routes('family=4', delta))
        .status(404)
        .detail(`unknown autopeering request ${id}`);
      expectResponse(await routes('family=4', noAsn)).status(403);
    });
  });
});
