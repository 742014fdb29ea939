import { expect } from 'chai';
import { evaluateFlapAlerts } from '../../../../commands/flap-alerts.js';
import { raiseSignal } from '../../../../commands/notify/fanout.js';
import type { Notifier } from '../../../../commands/notify/notifier.js';
import { requestStream } from '../../../../domain/autopeering/request.js';
import type { Signal } from '../../../../domain/notify/signals.js';
import { expectResponse } from '../../../support/http.js';
import { eventually } from '../../../support/wait.js';
import { applyResult, snapshot, startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { NOTIFY_ENV, Receiver, startTestNotifier } from './support.js';

const BASE = '/admin/notifications';
const T0 = Date.parse('2026-11-01T12:00:00Z');
const MIN = 60_000;
const AS_A = 4242420002;
const PREFIX = '172.21.0.0/24';

describe('Notifications from what happens: flap alerts, health, sessions, applies, requests; suppression and floods (issue 32)', function () {
  this.timeout(60_000);
  let h: AgentHarness;
  let receiver: Receiver;
  let notifier: Notifier;
  let hour = 0;

  before(async () => {
    receiver = await new Receiver().start();
    h = await startAgents(['n1', 'n2'], { ...NOTIFY_ENV, NOTIFY_FLOOD_LIMIT: '6' });
    h.sys.clock.current = new Date(T0);
    notifier = startTestNotifier(h.sys);
  });
  after(async () => {
    await notifier?.stop();
    await h?.close();
    await receiver?.close();
  });
  // Each test starts an hour after the previous one: no repeat window or flood minute reaches across.
  beforeEach(() => {
    hour++;
    h.sys.clock.current = new Date(T0 + hour * 60 * MIN);
  });
  const advance = (ms: number) => h.sys.clock.advance(ms);

  async function channel(path: string, subscription: Record<string, unknown>, payload: 'json' | 'text' = 'json'): Promise<string> {
    const res = await h.admin.post(`${BASE}/channels`, { name: path, type: 'webhook', url: `${receiver.url}${path}`, payload });
    expectResponse(res).status(201);
    const id = res.body.channel.channel_id as string;
    expectResponse(await h.admin.post(`${BASE}/channels/${id}/subscriptions`, subscription)).status(201);
    return id;
  }
  const docs = (path: string) => receiver.on(path).map((r) => JSON.parse(r.body) as Record<string, any>);
  const deliveries = async (id: string) => (await h.admin.get(`${BASE}/channels/${id}/deliveries`)).body as Record<string, any>[];

  async function prefixReport(node: string, score: number) {
    const body = {
      node_id: node,
      captured_at: h.sys.clock.now().toISOString(),
      feed_state: 'established',
      entries: [{ prefix: PREFIX, peer_asn: AS_A, origin_asn: 4242420077, score }],
    };
    expectResponse(await h.agent[node].post('/agent/prefix-flaps', body)).status(200);
  }
  async function sessions(node: string, states: Record<string, string>) {
    const body = snapshot(node, states, { captured_at: h.sys.clock.now().toISOString() });
    expectResponse(await h.agent[node].post('/agent/runtime-snapshot', body)).status(200);
  }

  it('a flap alert opened through agent reports reaches each channel exactly once, with its localisation; its clearing follows', async () => {
    const flapKinds = { kinds: ['flap_alert_opened', 'flap_alert_cleared'], repeat_window_s: 0 };
    await channel('/flap-json', flapKinds);
    await channel('/flap-text', flapKinds, 'text');
    await prefixReport('n1', 120);
    await prefixReport('n2', 30);
    expect(await evaluateFlapAlerts(h.sys.context, h.sys.clock.now())).to.include({ opened: 1 });
    const [opened] = await eventually(() => docs('/flap-json').length === 1 && docs('/flap-json'), { what: 'the opened alert' });
    expect(opened).to.include({ kind: 'flap_alert_opened', severity: 'warning', peer_asn: AS_A, title: `Flap alert opened: prefix ${PREFIX} from AS${AS_A}` });
    expect(opened.lines[0]).to.equal('score 120.0');
    expect(opened.lines[1]).to.equal('nodes: n1, n2');
    expect(opened.lines[2]).to.match(/^localised: /);
    await eventually(() => receiver.on('/flap-text').length === 1);
    expect(JSON.parse(receiver.on('/flap-text')[0].body).text).to.match(new RegExp(`^\\[warning\\] Flap alert opened: prefix ${PREFIX.replace('.', '\\.')}`));
    // 13 minutes on the score is below the close line: the clearing, a later event of the same stream, is the barrier.
    advance(13 * MIN);
    expect(await evaluateFlapAlerts(h.sys.context, h.sys.clock.now())).to.include({ resolved: 1 });
    await eventually(() => docs('/flap-json').length === 2 && receiver.on('/flap-text').length === 2, { what: 'the cleared alert on both' });
    expect(docs('/flap-json').map((d) => d.kind)).to.deep.equal(['flap_alert_opened', 'flap_alert_cleared']);
    expect(receiver.on('/flap-text').map((r) => JSON.parse(r.body).text.split(' ')[1])).to.deep.equal(['Flap', 'Flap']);
    expect(new Set(receiver.on('/flap-json').map((r) => r.headers['idempotency-key'])).size).to.equal(2);
  });

  it('filters by kind, node and least severity', async () => {
    const critical = await channel('/n2-critical', { kinds: ['node_health'], node_ids: ['n2'], min_severity: 'critical', repeat_window_s: 0 });
    await channel('/n1-any', { kinds: [], node_ids: ['n1'], min_severity: 'warning', repeat_window_s: 0 });
    await sessions('n1', { p1: 'established', p2: 'idle' }); // n1 degraded (warning)
    await sessions('n2', { p1: 'established', p2: 'idle' }); // n2 degraded: below critical
    await eventually(() => docs('/n1-any').some((d) => d.title === 'Node n1 is degraded (was unknown)'));
    await sessions('n2', { p1: 'idle', p2: 'idle' }); // n2 down (critical): the barrier on /n2-critical
    const got = await eventually(() => docs('/n2-critical').length > 0 && docs('/n2-critical'));
    expect(got.map((d) => d.title)).to.deep.equal(['Node n2 is down (was degraded)']);
    expect(got[0]).to.include({ kind: 'node_health', severity: 'critical', node_id: 'n2' });
    expect((await deliveries(critical)).map((d) => d.kind)).to.deep.equal(['node_health']);
    expect(docs('/n1-any').every((d) => d.node_id === 'n1')).to.equal(true);
  });

  it('notifies a session down longer than down_after_s; one back sooner is cancelled', async () => {
    const id = await channel('/sessions', { kinds: ['session_down'], node_ids: ['n1'], down_after_s: 120, repeat_window_s: 0 });
    await sessions('n1', { p1: 'established', p2: 'established' });
    await sessions('n1', { p1: 'idle', p2: 'idle' });
    const pending = await eventually(async () => {
      const log = await deliveries(id);
      return log.length === 2 && log;
    });
    expect(pending.map((d) => d.status)).to.deep.equal(['queued', 'queued']);
    advance(MIN);
    await sessions('n1', { p1: 'idle', p2: 'established' });
    await eventually(async () => (await deliveries(id)).some((d) => d.status === 'cancelled'), { what: 'p2 cancelled' });
    advance(MIN + 1000);
    const [down] = await eventually(() => docs('/sessions').length > 0 && docs('/sessions'), { what: 'p1 down notified' });
    expect(down).to.include({
      kind: 'session_down',
      severity: 'critical',
      node_id: 'n1',
      peer_asn: AS_A,
      title: `Session p1 on n1 (AS${AS_A}) has been down for 2 min`,
    });
    const log = await deliveries(id);
    expect(log.map((d) => [d.title, d.status]).sort()).to.deep.equal([
      [`Session p1 on n1 (AS${AS_A}) has been down for 2 min`, 'delivered'],
      [`Session p2 on n1 (AS${AS_A}) has been down for 2 min`, 'cancelled'],
    ]);
    expect(docs('/sessions')).to.have.length(1);
  });

  it('notifies a failed apply and a new peering request', async () => {
    await channel('/ops', { kinds: ['apply_failed', 'peering_request'], repeat_window_s: 0 });
    expectResponse(await h.agent.n1.post('/agent/apply-result', applyResult('n1', 'failed', 1))).status(200);
    const [apply] = await eventually(() => docs('/ops').length === 1 && docs('/ops'));
    expect(apply).to.include({ kind: 'apply_failed', node_id: 'n1', title: 'Apply of generation 1 on n1 failed' });
    expect(apply.lines).to.deep.equal(['bird: syntax error']);
    const record = {
      request_id: 7,
      node_id: 'n2',
      asn: AS_A,
      mntner: 'GAMMA-MNT',
      peering_id: 70,
      form: 'link-local-mp',
      requested: {},
      provision: {},
    };
    await h.sys.store.append([{ streamId: requestStream(7), expected: 'no_stream', events: [{ type: 'AutopeeringRequestProvisioned', data: record }] }], {
      actor: 'spec',
      recordedAt: h.sys.clock.now().toISOString(),
    });
    await eventually(() => docs('/ops').length === 2);
    expect(docs('/ops')[1]).to.include({ kind: 'peering_request', node_id: 'n2', peer_asn: AS_A, title: `Peering request 7 of AS${AS_A} at n2` });
  });

  it('suppresses repeats within the window and turns a flood into one summary at the minute’s end', async () => {
    const id = await channel('/flood', { kinds: ['registry_sync_failed'], repeat_window_s: 300 });
    const signal = (n: number, group: string): Signal => ({
      id: `spec-flood-${hour}-${n}`,
      kind: 'registry_sync_failed',
      severity: 'warning',
      node_id: null,
      nodes: [],
      peer_asn: null,
      group,
      title: `sync failed #${n}`,
      lines: [],
      at: h.sys.clock.now().toISOString(),
      facts: {},
    });
    expect(await raiseSignal(h.sys.pool, signal(0, 'same'), { floodLimit: 6 })).to.deep.equal(['queued']);
    expect(await raiseSignal(h.sys.pool, signal(1, 'same'), { floodLimit: 6 })).to.deep.equal(['suppressed']);
    // Raising the same signal again is a no-op (its id is the idempotency key).
    expect(await raiseSignal(h.sys.pool, signal(0, 'same'), { floodLimit: 6 })).to.deep.equal(['duplicate']);
    const outcomes: string[] = [];
    for (let n = 2; n < 11; n++) outcomes.push(...(await raiseSignal(h.sys.pool, signal(n, `g${n}`), { floodLimit: 6 })));
    expect(outcomes).to.deep.equal(['queued', 'queued', 'queued', 'queued', 'queued', 'summarised', 'summarised', 'summarised', 'summarised']);
    await eventually(() => docs('/flood').length === 6, { what: 'six single notifications' });
    expect(
      docs('/flood')
        .map((d) => d.title)
        .sort(),
    ).to.deep.equal(['sync failed #0', 'sync failed #2', 'sync failed #3', 'sync failed #4', 'sync failed #5', 'sync failed #6']);
    expect((await deliveries(id)).find((d) => d.title === 'sync failed #0')).to.include({ suppressed: 1 });
    advance(MIN);
    const [summary] = await eventually(() => docs('/flood').length === 7 && docs('/flood').slice(6), { what: 'the summary' });
    expect(summary).to.include({ kind: 'summary', title: 'Notification flood: 4 in one minute' });
    expect(summary.lines).to.deep.equal(['sync failed #7', 'sync failed #8', 'sync failed #9', 'sync failed #10']);
    expect(summary.facts.count).to.equal(4);
  });
});
