import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { postCounters, postReport } from './series-support.js';

describe('Console node metrics matrix (/ui/nodes/metrics)', function () {
  this.timeout(60_000);
  let h: AgentHarness;
  before(async () => {
    h = await startAgents(['m1', 'm2', 'silent']);
  });
  after(async () => h?.close());

  it('draws every range on its fixed grid: equal-length, index-aligned series for every node', async () => {
    h.sys.clock.current = new Date('2026-11-02T10:07:00Z');
    const grids = { '1h': [300, 12], '6h': [600, 36], '24h': [1800, 48], '7d': [10_800, 56] } as const;
    for (const [range, [width, count]] of Object.entries(grids)) {
      h.sys.clock.advance(6000); // past the 5 s cache of the previous range's answer
      const res = await h.admin.get(`/ui/nodes/metrics?range=${range}`);
      expectResponse(res).status(200);
      expect(res.body.range).to.equal(range);
      expect(res.body.timestamps, range).to.have.length(count);
      const t = res.body.timestamps.map((s: string) => Date.parse(s) / 1000);
      t.forEach((x: number, i: number) => i > 0 && expect(x - t[i - 1]).to.equal(width));
      expect(t.at(-1) % width).to.equal(0);
      expect(res.body.nodes.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['m1', 'm2', 'silent']);
      for (const n of res.body.nodes)
        for (const k of ['cpu_percent', 'rss_mb', 'rx_bytes_per_sec', 'tx_bytes_per_sec', 'reconcile_failures'])
          expect(n[k], `${range} ${k}`).to.have.length(count);
    }
    expect((await h.admin.get('/ui/nodes/metrics')).body.range).to.equal('6h');
  });

  it('averages CPU and RSS per bucket, gives rates, and tells reported-without-failure (0) from not reported (null)', async () => {
    h.sys.clock.current = new Date('2026-11-03T10:00:00Z');
    await postCounters(h, 'm1', { wg0: [0, 0] }, { cpu: 10, rss: 100 * 1_048_576 });
    await postReport(h, 'm1', 'in_sync');
    h.sys.clock.advance(60_000);
    await postCounters(h, 'm1', { wg0: [6000, 12_000] }, { cpu: 20, rss: 200 * 1_048_576 });
    await postReport(h, 'm1', 'failed');
    await postReport(h, 'm2', 'in_sync'); // m2: a report, no snapshot
    h.sys.clock.advance(5 * 60_000); // 10:06, the next 5-minute bucket
    await postReport(h, 'm2', 'failed');
    h.sys.clock.advance(60_000);
    await postReport(h, 'm2', 'failed');
    const res = await h.admin.get('/ui/nodes/metrics?range=1h');
    expectResponse(res).status(200);
    const i = res.body.timestamps.indexOf('2026-11-03T10:00:00.000Z');
    expect(i).to.equal(10);
    const [m1, m2, silent] = res.body.nodes;
    expect([m1.cpu_percent[i], m1.rss_mb[i], m1.rx_bytes_per_sec[i], m1.tx_bytes_per_sec[i], m1.reconcile_failures[i]]).to.deep.equal([15, 150, 100, 200, 1]);
    expect([m2.cpu_percent[i], m2.rx_bytes_per_sec[i], m2.reconcile_failures[i], m2.reconcile_failures[i + 1]]).to.deep.equal([null, null, 0, 2]);
    expect(m1.cpu_percent[i - 1]).to.equal(null);
    expect(m1.reconcile_failures[i + 1]).to.equal(null);
    for (const k of ['cpu_percent', 'rss_mb', 'rx_bytes_per_sec', 'tx_bytes_per_sec', 'reconcile_failures'])
      expect(
        silent[k].every((v: unknown) => v === null),
        k,
      ).to.equal(true);
  });

  it('caches the matrix 5 s per range: the same generated_at within, a fresh one after', async () => {
    h.sys.clock.current = new Date('2026-11-04T10:00:00Z');
    const first = (await h.admin.get('/ui/nodes/metrics?range=24h')).body;
    expect(first.generated_at).to.equal('2026-11-04T10:00:00.000Z');
    await postReport(h, 'm1', 'failed');
    h.sys.clock.advance(4999);
    const cached = (await h.admin.get('/ui/nodes/metrics?range=24h')).body;
    expect(cached).to.deep.equal(first);
    expect((await h.admin.get('/ui/nodes/metrics?range=1h')).body.generated_at).to.equal('2026-11-04T10:00:04.999Z');
    h.sys.clock.advance(1);
    const fresh = (await h.admin.get('/ui/nodes/metrics?range=24h')).body;
    expect(fresh.generated_at).to.equal('2026-11-04T10:00:05.000Z');
    expect(fresh.nodes[0].reconcile_failures.at(-1)).to.equal(1);
  });

  it('refuses other ranges and parameters (422)', async () => {
    for (const q of ['range=30d', 'range=2h', 'range=', 'top=5']) expectResponse(await h.admin.get(`/ui/nodes/metrics?${q}`)).status(422);
  });
});
