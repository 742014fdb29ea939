import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { epochIso, postCounters, steadyTraffic } from './series-support.js';

type Point = { at: string; rx_bytes_per_sec: number | null; tx_bytes_per_sec: number | null };
const byAt = (points: Point[]) => new Map(points.map((p) => [p.at, p]));

describe('Console traffic trends (/ui/fleet/traffic, /ui/nodes/{id}/traffic, /admin/nodes/{id}/traffic)', function () {
  this.timeout(60_000);
  let h: AgentHarness;
  before(async () => {
    h = await startAgents(['n1', 'n2', 'quiet']);
  });
  after(async () => h?.close());
  /** Each test starts on its own day, so windows of the tests do not overlap. */
  const startAt = (iso: string) => {
    h.sys.clock.current = new Date(iso);
  };

  it('draws the default window: the last 120 five-minute buckets, ascending, ending with the bucket of now, empty buckets null', async () => {
    startAt('2026-11-02T10:02:30Z');
    const res = await h.admin.get('/ui/fleet/traffic');
    expectResponse(res).status(200);
    expect(res.body).to.include({ range: null, bucket_seconds: 300, points_previous: null });
    expect(res.body.points).to.have.length(120);
    expect(res.body.points.at(-1)).to.deep.equal({ at: '2026-11-02T10:00:00.000Z', rx_bytes_per_sec: null, tx_bytes_per_sec: null });
    expect(res.body.points[0].at).to.equal(epochIso('2026-11-02T10:00:00Z', -119 * 300));
    const node = await h.admin.get('/ui/nodes/quiet/traffic');
    expectResponse(node).status(200);
    expect(node.body.node_id).to.equal('quiet');
    expect(node.body.points.every((p: Point) => p.rx_bytes_per_sec === null && p.tx_bytes_per_sec === null)).to.equal(true);
  });

  it('has the grid of every range, and compare=1 adds the preceding window, same width and count, index-aligned', async () => {
    startAt('2026-11-03T10:02:30Z');
    const grids = { '6h': [300, 72], '24h': [600, 144], '7d': [3600, 168], '30d': [14_400, 180] } as const;
    for (const [range, [width, count]] of Object.entries(grids)) {
      const res = await h.admin.get(`/ui/fleet/traffic?range=${range}&compare=1`);
      expectResponse(res).status(200);
      expect(res.body).to.include({ range, bucket_seconds: width });
      expect(res.body.points, range).to.have.length(count);
      expect(res.body.points_previous, range).to.have.length(count);
      const now = h.sys.clock.now().getTime() / 1000;
      const last = Date.parse(res.body.points.at(-1).at) / 1000;
      expect(last % width).to.equal(0);
      expect(now - last).to.be.within(0, width - 1);
      res.body.points.forEach((p: Point, i: number) => expect(Date.parse(p.at) - Date.parse(res.body.points_previous[i].at)).to.equal(count * width * 1000));
      const plain = await h.admin.get(`/ui/fleet/traffic?range=${range}&compare=0`);
      expect(plain.body.points_previous).to.equal(null);
    }
  });

  it('answers bytes per second per node and summed over the fleet; only WireGuard interfaces count', async () => {
    startAt('2026-11-04T10:00:00Z');
    await steadyTraffic(h, 'n1', { dn42_a: 1000, int_b: 500 }, 10);
    startAt('2026-11-04T10:00:00Z');
    await steadyTraffic(h, 'n2', { dn42_c: 100 }, 10);
    const n1 = byAt((await h.admin.get('/ui/nodes/n1/traffic')).body.points);
    expect(n1.get('2026-11-04T10:00:00.000Z')).to.deep.include({ rx_bytes_per_sec: 1500, tx_bytes_per_sec: 3000 });
    expect(n1.get('2026-11-04T10:05:00.000Z')).to.deep.include({ rx_bytes_per_sec: 1500, tx_bytes_per_sec: 3000 });
    expect(n1.get('2026-11-04T09:55:00.000Z')).to.deep.include({ rx_bytes_per_sec: null });
    const fleet = byAt((await h.admin.get('/ui/fleet/traffic')).body.points);
    expect(fleet.get('2026-11-04T10:05:00.000Z')).to.deep.include({ rx_bytes_per_sec: 1600, tx_bytes_per_sec: 3200 });
  });

  it('measures zero as 0 and an unmeasured bucket as null', async () => {
    startAt('2026-11-05T10:00:00Z');
    await steadyTraffic(h, 'n1', { dn42_a: 0 }, 5);
    h.sys.clock.advance(20 * 60_000); // the agent is away for 20 minutes: longer than a measured interval
    await postCounters(h, 'n1', { dn42_a: [0, 0] });
    const points = byAt((await h.admin.get('/ui/nodes/n1/traffic')).body.points);
    expect(points.get('2026-11-05T10:00:00.000Z')).to.deep.include({ rx_bytes_per_sec: 0, tx_bytes_per_sec: 0 });
    for (const gap of ['2026-11-05T10:10:00.000Z', '2026-11-05T10:15:00.000Z', '2026-11-05T10:20:00.000Z'])
      expect(points.get(gap)).to.deep.include({ rx_bytes_per_sec: null, tx_bytes_per_sec: null });
  });

  it('takes a counter reset as a restart: no negative rate, no spike', async () => {
    startAt('2026-11-06T10:00:00Z');
    const reached = await steadyTraffic(h, 'n1', { dn42_a: 1000 }, 4); // 10:00 to 10:04, counters at 240,000
    expect(reached.dn42_a[0]).to.equal(240_000);
    h.sys.clock.advance(60_000);
    await postCounters(h, 'n1', { dn42_a: [60_000, 120_000] }); // 10:05: restarted, counted 60,000 since
    await steadyTraffic(h, 'n1', { dn42_a: 1000 }, 4, { dn42_a: [60_000, 120_000] });
    const points = (await h.admin.get('/ui/nodes/n1/traffic')).body.points as Point[];
    const measured = points.filter((p) => p.rx_bytes_per_sec !== null);
    expect(measured.map((p) => [p.at, p.rx_bytes_per_sec, p.tx_bytes_per_sec])).to.deep.equal([
      ['2026-11-06T10:00:00.000Z', 1000, 2000],
      ['2026-11-06T10:05:00.000Z', 1000, 2000],
    ]);
  });

  it('places samples at the agent time: late ones in their buckets, out-of-order ones ignored, future ones at now', async () => {
    startAt('2026-11-07T10:30:00Z');
    // An agent cut off since 10:00 sends its snapshots late, in order.
    for (let m = 0; m <= 4; m++)
      await postCounters(h, 'n2', { dn42_c: [m * 30_000, 0] }, { capturedAt: new Date(Date.parse('2026-11-07T10:00:00Z') + m * 60_000) });
    // A retry of an older snapshot with wild counters adds nothing.
    await postCounters(h, 'n2', { dn42_c: [9e9, 9e9] }, { capturedAt: new Date('2026-11-07T10:02:00Z') });
    let points = byAt((await h.admin.get('/ui/nodes/n2/traffic')).body.points);
    expect(points.get('2026-11-07T10:00:00.000Z')).to.deep.include({ rx_bytes_per_sec: 500, tx_bytes_per_sec: 0 });
    expect(points.get('2026-11-07T10:30:00.000Z')).to.deep.include({ rx_bytes_per_sec: null });
    // A clock far ahead is placed at the server's now.
    await postCounters(h, 'n2', { dn42_c: [0, 0] }, { capturedAt: new Date('2026-11-07T10:31:00Z') });
    h.sys.clock.advance(60_000);
    await postCounters(h, 'n2', { dn42_c: [60_000, 0] }, { capturedAt: new Date('2026-11-08T10:31:00Z') });
    points = byAt((await h.admin.get('/ui/nodes/n2/traffic')).body.points);
    expect(points.get('2026-11-07T10:30:00.000Z')).to.deep.include({ rx_bytes_per_sec: 1000 });
    const archive = (await h.admin.get('/admin/nodes/n2/traffic')).body.series.filter((r: { interface: string }) => r.interface === 'dn42_c');
    expect(archive.map((r: { at: string }) => r.at)).to.deep.equal(['2026-11-07T10:00:00.000Z', '2026-11-07T10:30:00.000Z']);
  });

  it('fills points_previous from the preceding window at the same index', async () => {
    startAt('2026-11-09T09:00:00Z');
    await steadyTraffic(h, 'n2', { dn42_c: 200 }, 5);
    h.sys.clock.current = new Date('2026-11-09T15:01:00Z');
    const res = await h.admin.get('/ui/nodes/n2/traffic?range=6h&compare=1');
    const i = res.body.points_previous.findIndex((p: Point) => p.at === '2026-11-09T09:00:00.000Z');
    expect(i).to.be.greaterThan(-1);
    expect(res.body.points_previous[i]).to.deep.include({ rx_bytes_per_sec: 200, tx_bytes_per_sec: 400 });
    expect(res.body.points[i].at).to.equal('2026-11-09T15:00:00.000Z');
    expect(res.body.points[i].rx_bytes_per_sec).to.equal(null);
  });

  it('serves the admin archive: 5-minute rows of every interface at the agent time, last 120 buckets', async () => {
    startAt('2026-11-10T10:00:00Z');
    await steadyTraffic(h, 'n1', { dn42_a: 10 }, 6);
    const res = await h.admin.get('/admin/nodes/n1/traffic');
    expectResponse(res).status(200);
    expect(res.body.node_id).to.equal('n1');
    expect(res.body.series.map((r: { at: string; interface: string }) => `${r.at} ${r.interface}`)).to.deep.equal([
      '2026-11-10T10:00:00.000Z dn42_a',
      '2026-11-10T10:00:00.000Z eth0',
      '2026-11-10T10:05:00.000Z dn42_a',
      '2026-11-10T10:05:00.000Z eth0',
    ]);
    expect(res.body.series[2]).to.deep.include({ rx_bytes: 3000, tx_bytes: 6000 });
  });

  it('accepts a leap second in captured_at and places it at the next minute', async () => {
    startAt('2026-11-11T00:00:30Z');
    const leap = '2026-11-10T23:59:60Z';
    expectResponse(
      await h.agent.n1.post('/agent/wireguard-traffic', { node_id: 'n1', captured_at: leap, peers: [{ interface: 'dn42_a', rx_bytes: 1, tx_bytes: 1 }] }),
    ).status(200);
    const { rows } = await h.sys.pool.query(`SELECT at FROM wireguard_traffic_samples WHERE node_id = 'n1' ORDER BY at DESC LIMIT 1`);
    expect((rows[0].at as Date).toISOString()).to.equal('2026-11-11T00:00:00.000Z');
  });

  it('answers 404 for an unknown node and 422 for a bad range, compare or parameter', async () => {
    expectResponse(await h.admin.get('/ui/nodes/ghost/traffic'))
      .status(404)
      .detail('unknown node ghost');
    expectResponse(await h.admin.get('/admin/nodes/ghost/traffic'))
      .status(404)
      .detail('unknown node ghost');
    for (const q of ['range=1h', 'range=90d', 'compare=2', 'compare=yes', 'bogus=1']) {
      expectResponse(await h.admin.get(`/ui/fleet/traffic?${q}`)).status(422);
      expectResponse(await h.admin.get(`/ui/nodes/n1/traffic?${q}`)).status(422);
    }
  });

  it('requires the admin credential', async () => {
    const anon = await fetch(`${h.url}/control/v1/ui/fleet/traffic`);
    expect(anon.status).to.equal(401);
  });
});
