import { expect } from 'chai';
import { createControlApp } from '../../../../http/control/app.js';
import { loadConfig } from '../../../../infra/config.js';
import { issueAgentToken } from '../../../support/agents.js';
import { api, expectResponse } from '../../../support/http.js';
import { givenPortalSession } from '../../../support/portal.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { snapshot } from '../agent/telemetry-support.js';
import { ADMIN_TOKEN, node } from '../fleet/support.js';

const GAMMA = 4242420010;
const DELTA = 4242420011;
const KEY = 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
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

describe('Portal: observing a request (traffic)', function () {
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
});
