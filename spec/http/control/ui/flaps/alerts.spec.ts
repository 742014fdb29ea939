import { expect } from 'chai';
import { evaluateFlapAlerts, startFlapAlertJob } from '../../../../../commands/flap-alerts.js';
import { FLAP_ALERTS_STREAM } from '../../../../../domain/flaps/alerts.js';
import { RESOLVED_ALERTS_KEPT } from '../../../../../projections/flap-alerts/projection.js';
import { flapAlertsOfPeer } from '../../../../../projections/flap-alerts/queries.js';
import { expectResponse } from '../../../../support/http.js';
import { eventually } from '../../../../support/wait.js';
import { snapshot, startAgents, type AgentHarness } from '../../agent/telemetry-support.js';

const T0 = Date.parse('2026-11-01T12:00:00Z');
const MIN = 60_000;
const AS_A = 4242420002;
const PREFIX = '172.21.0.0/24';
/** Document 3: prefix half-life 10 minutes, session half-life 30 minutes. */
const prefixScore = (score: number, ms: number) => score * Math.pow(2, -ms / 1000 / 600);

describe('Flap alerts: the alert job and GET /ui/fleet/flap-alerts', function () {
  this.timeout(60_000);
  let h: AgentHarness;

  beforeEach(async () => {
    h = await startAgents(['n1', 'n2']);
    h.sys.clock.current = new Date(T0);
  });
  afterEach(async () => h?.close());

  const evaluate = () => evaluateFlapAlerts(h.sys.context, h.sys.clock.now());
  const at = (ms: number) => (h.sys.clock.current = new Date(T0 + ms));

  async function prefixReport(node: string, score: number) {
    const body = {
      node_id: node,
      captured_at: h.sys.clock.now().toISOString(),
      feed_state: 'established',
      entries: [{ prefix: PREFIX, peer_asn: AS_A, origin_asn: 4242420077, score }],
    };
    expectResponse(await h.agent[node].post('/agent/prefix-flaps', body)).status(200);
  }

  /** `flaps` times Established -> Idle -> Established of session ebgp_a at the current clock: each adds 1 to its score. */
  async function sessionFlaps(node: string, flaps: number) {
    const post = async (state: string) => {
      const body = snapshot(node, { ebgp_a: state }, { captured_at: h.sys.clock.now().toISOString() });
      expectResponse(await h.agent[node].post('/agent/runtime-snapshot', body)).status(200);
    };
    await post('established');
    for (let i = 0; i < flaps; i++) {
      await post('idle');
      await post('established');
    }
  }

  async function alerts(query = '') {
    const res = await h.admin.get(`/ui/fleet/flap-alerts${query}`);
    expectResponse(res).status(200);
    return res.body.alerts as Record<string, unknown>[];
  }

  it('opens a prefix alert at 100, keeps it between the lines and resolves it below 50 (scores decayed at known times)', async () => {
    await prefixReport('n1', 120);
    await prefixReport('n2', 30);
    expect(await evaluate()).to.deep.equal({ opened: 1, resolved: 0, open: 1 });
    const [opened] = await alerts();
    expect(opened).to.deep.equal({
      id: 1,
      kind: 'prefix',
      node_id: null,
      name: null,
      prefix: PREFIX,
      peer_asn: AS_A,
      nodes: ['n1', 'n2'],
      peak_score: 120,
      last_score: 120,
      started_at: new Date(T0).toISOString(),
      resolved_at: null,
      active: true,
    });
    // 12 minutes on: 120 · 2^(−1.2) ≈ 52.2, between the lines: still open, last score updated, no second alert.
    at(12 * MIN);
    expect(await evaluate()).to.deep.equal({ opened: 0, resolved: 0, open: 1 });
    let [row] = await alerts();
    expect(row.last_score).to.be.closeTo(prefixScore(120, 12 * MIN), 1e-9);
    expect(row).to.include({ id: 1, peak_score: 120, active: true });
    // The job's score is in its own table; the projection's row is as its events left it.
    const stored = await h.sys.pool.query(
      `SELECT a.last_score AS projected, s.last_score AS scored FROM flap_alerts a JOIN flap_alert_scores s USING (alert_id) WHERE alert_id = 1`,
    );
    expect(stored.rows[0].projected).to.equal(120);
    expect(stored.rows[0].scored).to.be.closeTo(prefixScore(120, 12 * MIN), 1e-9);
    // 13 minutes: ≈ 48.7 < 50: resolved.
    at(13 * MIN);
    expect(await evaluate()).to.deep.equal({ opened: 0, resolved: 1, open: 0 });
    [row] = await alerts();
    expect(row).to.include({ id: 1, active: false, peak_score: 120, resolved_at: new Date(T0 + 13 * MIN).toISOString() });
    expect(row.last_score).to.be.closeTo(prefixScore(120, 13 * MIN), 1e-9);
    expect(await alerts('?active=1')).to.deep.equal([]);
    expect((await alerts('?active=0')).map((a) => a.id)).to.deep.equal([1]);
    // A resolved alert's scores row goes with the evaluation that saw it resolved.
    expect((await h.sys.pool.query(`SELECT alert_id FROM flap_alert_scores`)).rows).to.deep.equal([]);
  });

  it('opens a session alert at 3 and resolves it below 1.5 (half-life 30 min); nothing below the alert line', async () => {
    await sessionFlaps('n1', 2);
    expect(await evaluate()).to.deep.equal({ opened: 0, resolved: 0, open: 0 });
    await sessionFlaps('n1', 2);
    expect(await evaluate()).to.deep.include({ opened: 1 });
    const [open] = await alerts('?active=1');
    // peer_asn: the eBGP session's remote AS of the snapshot.
    expect(open).to.include({ kind: 'session', node_id: 'n1', name: 'ebgp_a', prefix: null, peer_asn: 4242420002, peak_score: 4, last_score: 4 });
    expect(open.nodes).to.deep.equal(['n1']);
    // One half-life: 2, between the lines.
    at(30 * MIN);
    expect(await evaluate()).to.deep.equal({ opened: 0, resolved: 0, open: 1 });
    // 60 min: 1 < 1.5.
    at(60 * MIN);
    expect(await evaluate()).to.deep.equal({ opened: 0, resolved: 1, open: 0 });
    const [closed] = await alerts();
    expect(closed).to.include({ active: false, peak_score: 4, last_score: 1 });
  });

  it('appends the alerts as events of the flap-alerts stream (no event for the score updates of an open alert)', async () => {
    await prefixReport('n1', 150);
    await evaluate();
    at(MIN);
    await evaluate();
    at(20 * MIN);
    await evaluate();
    const events = await h.sys.store.readStream(FLAP_ALERTS_STREAM);
    expect(events.map((e) => e.type)).to.deep.equal(['FlapAlertOpened', 'FlapAlertResolved']);
  });

  it('resolves the alerts of a decommissioned node at the next evaluation', async () => {
    await sessionFlaps('n2', 4);
    await evaluate();
    expect(await alerts('?active=1')).to.have.length(1);
    expectResponse(await h.admin.post('/admin/nodes/n2/decommission')).status(200);
    at(MIN);
    expect(await evaluate()).to.deep.equal({ opened: 0, resolved: 1, open: 0 });
    const [row] = await alerts();
    expect(row).to.include({ active: false, node_id: 'n2', last_score: 4 });
  });

  it('pages newest first with before_id and filters by active', async () => {
    // Three alerts: two prefix directions and a session; the first direction resolves.
    await prefixReport('n1', 200);
    await evaluate(); // id 1
    at(MIN);
    await sessionFlaps('n1', 3);
    await evaluate(); // id 2
    at(25 * MIN);
    await prefixReport('n2', 110); // the same direction again from n2: 110 ≥ 100 while 200 · 2^(−2.5) ≈ 35 elsewhere
    const result = await evaluate();
    expect(result).to.deep.equal({ opened: 0, resolved: 0, open: 2 });
    // The direction's alert (id 1) stays open with n2's score.
    let rows = await alerts();
    expect(rows.map((a) => a.id)).to.deep.equal([2, 1]);
    expect(rows[1].nodes).to.deep.equal(['n1', 'n2']);
    at(40 * MIN);
    await evaluate(); // prefix 110 · 2^(−1.5) ≈ 38.9 < 50 resolves; session 3 · 2^(−39/30) ≈ 1.2 resolves
    await prefixReport('n1', 101);
    await evaluate(); // id 5 (after two resolutions, versions 2 and 3)
    rows = await alerts();
    expect(rows.map((a) => a.id)).to.deep.equal([5, 2, 1]);
    expect((await alerts('?limit=1')).map((a) => a.id)).to.deep.equal([5]);
    expect((await alerts('?limit=1&before_id=5')).map((a) => a.id)).to.deep.equal([2]);
    expect((await alerts('?before_id=2')).map((a) => a.id)).to.deep.equal([1]);
    expect((await alerts('?active=1')).map((a) => a.id)).to.deep.equal([5]);
    expect((await alerts('?active=0&before_id=2')).map((a) => a.id)).to.deep.equal([1]);
  });

  it('finds the alerts of a peer AS (prefix directions and eBGP sessions to it) and reproduces the read model on rebuild', async () => {
    await prefixReport('n1', 150);
    await sessionFlaps('n2', 3);
    await evaluate();
    at(60 * MIN);
    await evaluate(); // both resolve
    await prefixReport('n1', 100);
    await evaluate();
    expect((await flapAlertsOfPeer(h.sys.pool, AS_A, 20)).map((a) => [a.id, a.kind, a.active])).to.deep.equal([
      [5, 'prefix', true],
      [2, 'session', false],
      [1, 'prefix', false],
    ]);
    expect(await flapAlertsOfPeer(h.sys.pool, 4242420099, 20)).to.deep.equal([]);
    const before = await alerts();
    await h.sys.projections.rebuild(['flap-alerts']);
    // Resolved rows come back exactly (the resolution carries the final scores); the open one as opened, until the next evaluation.
    expect(await alerts()).to.deep.equal(before);
  });

  it('answers 422 for every bad parameter, never 500', async () => {
    for (const q of [
      'active=2',
      'active=true',
      'active=',
      'limit=0',
      'limit=201',
      'limit=x',
      'before_id=0',
      'before_id=9007199254740992',
      'before_id=-1',
      'other=1',
    ]) {
      expectResponse(await h.admin.get(`/ui/fleet/flap-alerts?${q}`)).status(422);
    }
    expect(await alerts(`?before_id=${Number.MAX_SAFE_INTEGER}&limit=200`)).to.deep.equal([]);
  });

  it(`keeps only the latest ${RESOLVED_ALERTS_KEPT} resolved alerts in the read model; every open one stays`, async () => {
    const key = (i: number) => ({ kind: 'prefix', prefix: `10.${Math.floor(i / 256)}.${i % 256}.0/24`, peer_asn: AS_A });
    const events = [];
    for (let i = 0; i < RESOLVED_ALERTS_KEPT + 10; i++) {
      const t = new Date(T0 + i * 1000).toISOString();
      events.push({ type: 'FlapAlertOpened', data: { key: key(i), nodes: ['n1'], score: 100, at: t } });
      events.push({
        type: 'FlapAlertResolved',
        data: { alert_id: 2 * i + 1, key: key(i), nodes: ['n1'], peak_score: 100, last_score: 40, at: t, resolution: 'below_close_line' },
      });
    }
    events.push({ type: 'FlapAlertOpened', data: { key: key(9999), nodes: ['n1'], score: 100, at: new Date(T0).toISOString() } });
    await h.sys.store.append([{ streamId: FLAP_ALERTS_STREAM, expected: 'no_stream', events }], { actor: 'spec' });
    const { rows } = await h.sys.pool.query(
      `SELECT count(*) FILTER (WHERE resolved_at IS NOT NULL)::int AS resolved, min(alert_id) FILTER (WHERE resolved_at IS NOT NULL)::int AS oldest, count(*) FILTER (WHERE resolved_at IS NULL)::int AS open FROM flap_alerts`,
    );
    expect(rows[0]).to.deep.equal({ resolved: RESOLVED_ALERTS_KEPT, oldest: 2 * 10 + 1, open: 1 });
    // The job's state is the open one: a reading for its key opens nothing.
    expect((await alerts('?active=1&limit=200')).map((a) => a.id)).to.deep.equal([2 * (RESOLVED_ALERTS_KEPT + 10) + 1]);
  });

  it('runs as a periodic single-instance job on the injected clock', async () => {
    await prefixReport('n1', 130);
    let runs = 0;
    const job = startFlapAlertJob(h.sys.context, () => (runs++, h.sys.clock.now()), 50);
    try {
      await eventually(() => runs >= 2, { what: 'two runs of the job' });
      expect((await alerts('?active=1')).map((a) => a.prefix)).to.deep.equal([PREFIX]);
    } finally {
      await job.stop();
    }
  });
});
