import { expect } from 'chai';
import { evaluateFlapAlerts } from '../../../commands/flap-alerts.js';
import { REPLICA_LAG_SQL } from '../../../infra/metrics/database.js';
import { expectResponse } from '../../support/http.js';
import { parsePrometheus, samplesOf, type PromFamily } from '../../support/prometheus.js';
import { snapshot, startAgents, type AgentHarness } from './agent/telemetry-support.js';

const T0 = Date.parse('2026-11-01T12:00:00Z');
const SEC = 1000;
const MIN = 60 * SEC;

async function scrape(url: string): Promise<{ text: string; m: Map<string, PromFamily> }> {
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  expect(res.status, text.slice(0, 300)).to.equal(200);
  return { text, m: parsePrometheus(text) };
}

const byLabels = (m: Map<string, PromFamily>, name: string, keys: string[]) =>
  Object.fromEntries(samplesOf(m, name).map((s) => [keys.map((k) => s.labels![k]).join(' '), Number(s.value)]));

describe('Control /metrics: the gauges the Prometheus alert rules stand on (examples/prometheus/alerts.yml)', function () {
  this.timeout(60_000);
  let h: AgentHarness;

  beforeEach(async () => {
    h = await startAgents(['n1', 'n2', 'n3']);
    h.sys.clock.current = new Date(T0);
  });
  afterEach(async () => h?.close());

  const postSnapshot = async (node: string, sessions: Record<string, string>, capturedAt = h.sys.clock.now()) =>
    expectResponse(await h.agent[node].post('/agent/runtime-snapshot', snapshot(node, sessions, { captured_at: capturedAt.toISOString() }))).status(200);

  it('dn42_bgp_sessions counts each node’s sessions by kind and health, every health present; dn42_telemetry_ingest_lag_seconds is receipt minus captured_at', async () => {
    await postSnapshot('n1', { ebgp_a: 'established', ebgp_b: 'idle', ebgp_c: 'down', ibgp_n2: 'active' }, new Date(T0 - 42 * SEC));
    // An agent clock ahead of the server is no negative lag.
    await postSnapshot('n2', { ebgp_d: 'established' }, new Date(T0 + 5 * SEC));
    await h.sys.context.background.drain();

    const { m } = await scrape(h.url);
    expect(byLabels(m, 'dn42_bgp_sessions', ['node_id', 'kind', 'health'])).to.deep.equal({
      'n1 ebgp up': 1,
      'n1 ebgp connecting': 0,
      'n1 ebgp down': 2,
      'n1 ebgp unknown': 0,
      'n1 ibgp up': 0,
      'n1 ibgp connecting': 1,
      'n1 ibgp down': 0,
      'n1 ibgp unknown': 0,
      'n2 ebgp up': 1,
      'n2 ebgp connecting': 0,
      'n2 ebgp down': 0,
      'n2 ebgp unknown': 0,
    });
    // n3 never reported: no lag to speak of (its silence is the stale alert's).
    expect(byLabels(m, 'dn42_telemetry_ingest_lag_seconds', ['node_id'])).to.deep.equal({ n1: 42, n2: 0 });

    // A decommissioned node leaves the ingest lag.
    expectResponse(await h.admin.post('/admin/nodes/n1/decommission', {})).status(200);
    expect(byLabels((await scrape(h.url)).m, 'dn42_telemetry_ingest_lag_seconds', ['node_id'])).to.deep.equal({ n2: 0 });
  });

  it('dn42_prefix_flap_changes_per_second is the console gauge (trimmed 15-minute mean); dn42_flap_alerts_open counts open alerts by kind', async () => {
    const flaps = async (node: string, total: number) =>
      expectResponse(
        await h.agent[node].post('/agent/prefix-flaps', {
          node_id: node,
          captured_at: h.sys.clock.now().toISOString(),
          feed_state: 'established',
          entries: [{ prefix: '172.21.0.0/24', peer_asn: 4242420002, origin_asn: 4242420077, score: 10 }],
          total_changes: total,
        }),
      ).status(200);
    await flaps('n1', 120);
    h.sys.clock.advance(MIN);
    await flaps('n1', 60);
    h.sys.clock.advance(MIN);
    // Two complete minutes of 120 and 60 changes in a 15-minute window: the top minute is dropped, 60 over 14 minutes of 60 s.
    let { m } = await scrape(h.url);
    expect(Number(samplesOf(m, 'dn42_prefix_flap_changes_per_second')[0].value)).to.be.closeTo(60 / 14 / 60, 1e-9);
    const rate = (await h.admin.get('/ui/fleet/flap-stats?range=1h')).body.gauge.rate_per_s as number;
    expect(Number(samplesOf(m, 'dn42_prefix_flap_changes_per_second')[0].value)).to.equal(rate);
    expect(byLabels(m, 'dn42_flap_alerts_open', ['kind'])).to.deep.equal({ session: 0, prefix: 0 });

    // Four drops of one session within the same minute: a session score of 4, over the alert line of 3.
    for (let i = 0; i < 4; i++) {
      await postSnapshot('n2', { ebgp_x: 'established' });
      await postSnapshot('n2', { ebgp_x: 'idle' });
    }
    const evaluation = await evaluateFlapAlerts(h.sys.context, h.sys.clock.now());
    expect(evaluation.opened).to.equal(1);
    ({ m } = await scrape(h.url));
    expect(byLabels(m, 'dn42_flap_alerts_open', ['kind'])).to.deep.equal({ session: 1, prefix: 0 });
  });

  it('dn42_db_replica_lag_seconds answers pg_stat_replication of the server’s database: no standby, no samples', async () => {
    const { rows } = await h.sys.pool.query(REPLICA_LAG_SQL);
    const { text, m } = await scrape(h.url);
    expect(text).to.include('# TYPE dn42_db_replica_lag_seconds gauge');
    expect(samplesOf(m, 'dn42_db_replica_lag_seconds').map((s) => [s.labels!.replica, Number(s.value)])).to.deep.equal(
      rows.map((r: { application_name: string; lag_seconds: number }) => [r.application_name, Number(r.lag_seconds)]),
    );
  });
});
