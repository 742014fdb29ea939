import { expect } from 'chai';
import { evaluateFlapAlerts } from '../../../../../commands/flap-alerts.js';
import { pruneTelemetry } from '../../../../../infra/telemetry/retention.js';
import { expectResponse } from '../../../../support/http.js';
import { startAgents, type AgentHarness } from '../../agent/telemetry-support.js';

const T0 = Date.parse('2026-11-01T12:00:00Z');
const SEC = 1000;
const MIN = 60 * SEC;
const DAY = 86_400_000;
const AS_A = 4242420002;
const t = (ms: number) => Math.floor(ms / 1000);

describe('Flap stats: the flap-rate archive and GET /ui/fleet/flap-stats', function () {
  this.timeout(60_000);
  let h: AgentHarness;

  beforeEach(async () => {
    h = await startAgents(['n1', 'n2']);
  });
  afterEach(async () => h?.close());

  const at = (ms: number) => (h.sys.clock.current = new Date(T0 + ms));

  async function report(node: string, extra: Record<string, unknown>, entries: Record<string, unknown>[] = []) {
    const body = { node_id: node, captured_at: h.sys.clock.now().toISOString(), feed_state: 'established', entries, ...extra };
    expectResponse(await h.agent[node].post('/agent/prefix-flaps', body)).status(200);
  }
  const entry = (prefix: string, score: number, extra: Record<string, unknown> = {}) => ({ prefix, peer_asn: AS_A, origin_asn: 4242420077, score, ...extra });

  async function stats(query = '') {
    const res = await h.admin.get(`/ui/fleet/flap-stats${query}`);
    expectResponse(res).status(200);
    return res.body;
  }

  /** An archive minute written directly (the long ranges). */
  const minute = (ms: number, changes: number | null, listed: number | null = changes) =>
    h.sys.pool.query(`INSERT INTO flap_rate_minutes (minute, reports, changes, listed_changes) VALUES ($1, 1, $2, $3)`, [new Date(ms), changes, listed]);

  it('sums the reports of each minute across nodes: null without a report, 0 measured quiet, only complete buckets; the gauge by hand', async () => {
    at(10 * SEC);
    await report('n1', { total_changes: 30 }, [entry('172.21.0.0/24', 25, { announcements: 9, withdrawals: 9 })]); // no baseline yet: listed 0
    at(20 * SEC);
    await report('n2', { total_changes: 20 });
    at(MIN + 10 * SEC);
    await report('n1', { total_changes: 12 }, [entry('172.21.0.0/24', 30, { announcements: 3, withdrawals: 2 })]);
    at(MIN + 30 * SEC);
    await evaluateFlapAlerts(h.sys.context, h.sys.clock.now()); // the point-in-time sample of minute 1
    at(3 * MIN + 10 * SEC);
    await report('n1', { total_changes: 0 }, [entry('172.21.0.0/24', 28, { announcements: 0, withdrawals: 0 })]);
    at(4 * MIN + 10 * SEC);
    await report('n1', { feed_state: 'down', total_changes: 7 }); // a down feed measures nothing
    at(5 * MIN + 10 * SEC);
    await report('n1', {}, [entry('172.21.0.0/24', 29, { announcements: 4, withdrawals: 0 })]); // an older agent: no total_changes
    at(5 * MIN + 30 * SEC);
    const body = await stats();
    expect(body).to.include({ range: '1h', window_s: 3600, bucket_s: 60, generated_at: new Date(T0 + 5 * MIN + 30 * SEC).toISOString() });
    expect(body.series).to.have.length(60);
    // The last complete bucket is 12:04; 12:05 is still running.
    expect(body.series.at(-1).t).to.equal(t(T0 + 4 * MIN));
    expect(body.series[0].t).to.equal(t(T0 - 55 * MIN));
    const [m0, m1, m2, m3, m4] = body.series.slice(-5);
    expect(m0).to.deep.equal({
      t: t(T0),
      changes: 50,
      listed_changes: 0,
      rate_per_s: 50 / 60,
      tracked_prefixes: null,
      flapping_prefixes: null,
      flapping_sessions: null,
      open_alerts: null,
    });
    expect(m1).to.deep.equal({
      t: t(T0 + MIN),
      changes: 12,
      listed_changes: 5,
      rate_per_s: 12 / 60,
      tracked_prefixes: 1,
      flapping_prefixes: 1,
      flapping_sessions: 0,
      open_alerts: 0,
    });
    expect(m2).to.deep.include({ changes: null, listed_changes: null, rate_per_s: null });
    expect(m3).to.deep.include({ changes: 0, listed_changes: 0, rate_per_s: 0 });
    expect(m4).to.deep.include({ changes: null, rate_per_s: null });
    expect(body.series.slice(0, -5).every((p: { changes: unknown }) => p.changes === null)).to.equal(true);
    // Gauge: 15 buckets 11:50..12:04 = [0 × 10 missing, 50, 12, 0 (missing), 0, 0 (missing)]; the top one (50) dropped: 12 / 14 buckets / 60 s.
    expect(body.gauge).to.deep.equal({ rate_per_s: 12 / 14 / 60, current_rate_per_s: null, percentile: 90, window_s: 900 });
    // A minute on, the older agent's minute is complete: its listed changes stand for the total.
    at(6 * MIN);
    const next = await stats();
    expect(next.series.at(-1)).to.deep.include({ t: t(T0 + 5 * MIN), changes: 4, listed_changes: 4 });
    expect(next.gauge.current_rate_per_s).to.equal(4 / 60);
  });

  it('aggregates the 60 s rows for the longer ranges: sum of changes, null only where no minute reported', async () => {
    at(0); // 12:00: the last complete 4 h bucket of 30d is 08:00–12:00
    const bucket = T0 - 4 * 3600 * SEC;
    await minute(bucket, 10, 4);
    await minute(bucket + 59 * MIN, 0, 0);
    await minute(bucket + 239 * MIN, 5, 5);
    await minute(bucket - 4 * 3600 * SEC, 0, 0); // 04:00: measured quiet
    await minute(T0 - 30 * DAY, 99); // the first bucket of the window
    await minute(T0 - 30 * DAY - MIN, 1000); // before the window
    await minute(T0, 77); // the running bucket: not shown
    const body = await stats('?range=30d');
    expect(body).to.include({ range: '30d', window_s: 30 * 86400, bucket_s: 14_400 });
    expect(body.series).to.have.length(180);
    expect(body.series[0]).to.deep.include({ t: t(T0 - 30 * DAY), changes: 99, rate_per_s: 99 / 14_400 });
    expect(body.series.at(-1)).to.deep.include({ t: t(bucket), changes: 15, listed_changes: 9, rate_per_s: 15 / 14_400 });
    expect(body.series.at(-2)).to.deep.include({ changes: 0, rate_per_s: 0 });
    expect(body.series.at(-3)).to.deep.include({ changes: null, rate_per_s: null });
    // The gauge does not depend on the range.
    expect(body.gauge).to.deep.equal((await stats()).gauge);
    for (const [range, bucket_s, points] of [
      ['6h', 300, 72],
      ['24h', 600, 144],
      ['7d', 3600, 168],
    ] as const) {
      const r = await stats(`?range=${range}`);
      expect(r).to.include({ range, bucket_s, window_s: bucket_s * points });
      expect(r.series).to.have.length(points);
      expect(r.series.at(-1).t).to.equal(t(T0) - bucket_s);
    }
  });

  it('answers 422 for any other range', async () => {
    for (const q of ['range=2h', 'range=', 'range=1H', 'range=90d', 'other=1']) {
      expectResponse(await h.admin.get(`/ui/fleet/flap-stats?${q}`)).status(422);
    }
  });

  it('keeps 60 days of archive (the telemetry retention job)', async () => {
    at(0);
    await minute(T0 - 60 * DAY - MIN, 1);
    await minute(T0 - 60 * DAY + MIN, 1);
    expect(await pruneTelemetry(h.sys.pool, h.sys.clock.now())).to.deep.include({ flap_rate_minutes: 1 });
    const { rows } = await h.sys.pool.query(`SELECT minute FROM flap_rate_minutes`);
    expect(rows.map((r) => (r.minute as Date).getTime())).to.deep.equal([T0 - 60 * DAY + MIN]);
  });
});
