import { expect } from 'chai';
import { evaluateFlapAlerts } from '../../../../commands/flap-alerts.js';
import { expectResponse } from '../../../support/http.js';
import { snapshot, startAgents, type AgentHarness } from '../agent/telemetry-support.js';

/** Document 3: prefix half-life 10 min, list line 20; session half-life 30 min, list line 3. */
const PREFIX_HALF_LIFE_S = 600;
const SESSION_HALF_LIFE_S = 1800;
const at = (minutes: number) => new Date(Date.UTC(2026, 10, 3, 10, minutes));
const iso = (minutes: number) => at(minutes).toISOString();
const prefixScore = (score: number, reportedAt: number, now: number) => score * Math.pow(2, -((now - reportedAt) * 60) / PREFIX_HALF_LIFE_S);
const sessionScore = (flaps: readonly number[], now: number) => flaps.reduce((s, t) => s + Math.pow(2, -((now - t) * 60) / SESSION_HALF_LIFE_S), 0);

const OWN = 4242420000;
const AS_A = 4242420002;
const AS_B = 4242420003;
const AS_C = 4242420004;
const AS_D = 4242420005;
const ORIGIN_X = 4242420077;
const ORIGIN_Y = 4242420088;

/** Sessions by node: name to remote AS. */
const REMOTE: Record<string, Record<string, number>> = {
  n1: { dn42_a: AS_A, ibgp_n2_v4: OWN },
  n2: { dn42_b: AS_B, dn42_c: AS_C },
  n3: { dn42_d: AS_D },
};

type Row = Record<string, any>;

describe('Console flap peers: GET /ui/fleet/flap-peers and /ui/fleet/flap-peers/{asn}', function () {
  this.timeout(120_000);
  let h: AgentHarness;

  /** A runtime snapshot of `nodeId` at minute `m` (server clock and capture time), sessions up unless named in `down`. */
  async function sessions(nodeId: string, m: number, down: readonly string[] = []) {
    h.sys.clock.current = at(m);
    const body = snapshot(nodeId, {}, { captured_at: iso(m) });
    body.bgp_protocols = Object.entries(REMOTE[nodeId]).map(([name, remote_asn]) => ({
      name,
      state: down.includes(name) ? 'idle' : 'established',
      since: '2026-11-03T09:00:00Z',
      remote_asn,
      routes_imported: 1,
      routes_exported: 1,
    }));
    expectResponse(await h.agent[nodeId].post('/agent/runtime-snapshot', body)).status(200);
  }
  /** Drops a session and brings it back within minute `m`: one flap. */
  async function flap(nodeId: string, m: number, ...names: string[]) {
    await sessions(nodeId, m, names);
    await sessions(nodeId, m);
  }
  async function prefixes(nodeId: string, m: number, entries: Row[]) {
    h.sys.clock.current = at(m);
    const body = { node_id: nodeId, captured_at: iso(m), feed_state: 'established', entries };
    expectResponse(await h.agent[nodeId].post('/agent/prefix-flaps', body)).status(200);
  }
  async function get(path: string) {
    const res = await h.admin.get(path);
    expectResponse(res).status(200);
    return res.body;
  }

  before(async () => {
    h = await startAgents(['n1', 'n2', 'n3']);
    for (const n of ['n1', 'n2', 'n3']) await sessions(n, 0);
    // AS B's session flaps four times at n2; A's once at n1; the iBGP session four times (our own AS: never a peer).
    for (const m of [1, 2, 3, 4]) {
      await flap('n2', m, 'dn42_b');
      await flap('n1', m, ...(m === 2 ? ['dn42_a', 'ibgp_n2_v4'] : ['ibgp_n2_v4']));
    }
    // Prefix evidence at minute 5: A carries two prefixes (one flapping), C two weak ones, one row has no peer (own origin).
    await prefixes('n1', 5, [
      { prefix: '172.21.0.0/24', peer_asn: AS_A, origin_asn: ORIGIN_X, score: 40, last_flap_at: iso(4), as_path: [AS_A, ORIGIN_X] },
      { prefix: '172.21.1.0/24', peer_asn: AS_A, origin_asn: ORIGIN_X, score: 5, last_flap_at: iso(3) },
      { prefix: '172.22.0.0/24', peer_asn: AS_C, origin_asn: AS_C, score: 0.6, last_flap_at: iso(1) },
      { prefix: '172.20.0.0/24', peer_asn: null, origin_asn: OWN, score: 50, last_flap_at: iso(5) },
    ]);
    await prefixes('n2', 5, [
      { prefix: '172.21.0.0/24', peer_asn: AS_A, origin_asn: ORIGIN_X, score: 10, last_flap_at: iso(2) },
      { prefix: '172.21.0.0/24', peer_asn: AS_C, origin_asn: ORIGIN_Y, score: 3, last_flap_at: iso(2) },
    ]);
  });
  after(async () => h?.close());

  it('rows every peer AS with flap data, by severity: each level over its list line, null for a level without data or a session that never flapped', async () => {
    h.sys.clock.current = at(10);
    const body = await get('/ui/fleet/flap-peers');
    expect(body.generated_at).to.equal(iso(10));
    expect(body.peers.map((p: Row) => p.asn)).to.deep.equal([AS_A, AS_B, AS_C]);
    const [a, b, c] = body.peers;

    const aPrefixMax = prefixScore(40, 5, 10);
    expect(a).to.deep.include({ asn: AS_A, name: null, prefix_count: 2, prefixes_flapping: 1, nodes: ['n1', 'n2'], last_change_at: iso(4) });
    expect(a.prefix_score_max).to.be.closeTo(aPrefixMax, 1e-9);
    expect(a.session_score_max).to.be.closeTo(sessionScore([2], 10), 1e-9);
    expect(a.severity).to.be.closeTo(aPrefixMax / 20, 1e-9);
    expect(a.sessions).to.have.length(1);
    expect(a.sessions[0]).to.deep.include({ node_id: 'n1', session: 'dn42_a', state: 'established', flapping: false });

    // B: sessions only; the four flaps put it over the session line while Established.
    const bScore = sessionScore([1, 2, 3, 4], 10);
    expect(bScore).to.be.above(3);
    expect(b).to.deep.include({ asn: AS_B, prefix_count: 0, prefixes_flapping: 0, prefix_score_max: null, nodes: ['n2'], last_change_at: iso(4) });
    expect(b.session_score_max).to.be.closeTo(bScore, 1e-9);
    expect(b.severity).to.be.closeTo(bScore / 3, 1e-9);
    expect(b.severity).to.be.at.least(1);
    expect(b.sessions).to.have.length(1);
    expect(b.sessions[0]).to.deep.include({ node_id: 'n2', session: 'dn42_b', state: 'established', flapping: true });
    expect(b.sessions[0].flap_score).to.be.closeTo(bScore, 1e-9);

    // C: weak prefixes, a session seen that never flapped (null: no flap record, not 0.0); below 1 as nothing is over a line.
    expect(c).to.deep.include({ asn: AS_C, prefix_count: 2, prefixes_flapping: 0, session_score_max: null, nodes: ['n1', 'n2'], last_change_at: iso(2) });
    expect(c.prefix_score_max).to.be.closeTo(prefixScore(3, 5, 10), 1e-9);
    expect(c.severity).to.be.closeTo(prefixScore(3, 5, 10) / 20, 1e-9);
    expect(c.sessions).to.deep.equal([{ node_id: 'n2', session: 'dn42_c', state: 'established', flap_score: null, flapping: false }]);
  });

  it('sets severity 1 exactly where a level reaches its list line', async () => {
    // A's strongest prefix decays from 40 at minute 5 to 20 at minute 15: exactly the prefix list line.
    h.sys.clock.current = at(15);
    const a = (await get('/ui/fleet/flap-peers')).peers.find((p: Row) => p.asn === AS_A);
    expect(a.prefix_score_max).to.be.closeTo(20, 1e-9);
    expect(a.severity).to.be.closeTo(1, 1e-9);
    expect(a.prefixes_flapping).to.equal(1);
    h.sys.clock.current = at(16);
    const later = (await get('/ui/fleet/flap-peers')).peers.find((p: Row) => p.asn === AS_A);
    expect(later.severity).to.be.below(1);
    expect(later.prefixes_flapping).to.equal(0);
  });

  it('cuts the list at limit after ordering and answers 422 for a limit out of range or an unknown parameter', async () => {
    h.sys.clock.current = at(10);
    expect((await get('/ui/fleet/flap-peers?limit=2')).peers.map((p: Row) => p.asn)).to.deep.equal([AS_A, AS_B]);
    expect((await get('/ui/fleet/flap-peers?limit=1')).peers.map((p: Row) => p.asn)).to.deep.equal([AS_A]);
    expect((await get('/ui/fleet/flap-peers?limit=200')).peers).to.have.length(3);
    for (const q of ['limit=0', 'limit=201', 'limit=x', 'limit=1.5', 'min_score=1']) expectResponse(await h.admin.get(`/ui/fleet/flap-peers?${q}`)).status(422);
  });

  it('forgets evidence decayed below 0.01: a peer whose prefix rows faded keeps its session level, one left with nothing is gone', async () => {
    // Two hours on: every prefix score is below 0.01 (40 · 2^-12.5), A's single session flap is still 2^(-128/30) > 0.01.
    h.sys.clock.current = at(130);
    const body = await get('/ui/fleet/flap-peers');
    expect(body.peers.map((p: Row) => p.asn)).to.deep.equal([AS_B, AS_A]);
    const a = body.peers[1];
    expect(a).to.deep.include({ prefix_count: 0, prefixes_flapping: 0, prefix_score_max: null, nodes: ['n1'], last_change_at: iso(2) });
    expect(a.session_score_max).to.be.closeTo(sessionScore([2], 130), 1e-9);
    const gone = await h.admin.get(`/ui/fleet/flap-peers/${AS_C}`);
    expectResponse(gone).status(404);
    expect(gone.body.detail).to.equal(`no flap data for AS${AS_C}`);
  });

  it('details a peer: its row plus its flat prefix rows from score 0.5, the same rows as the prefix flap list', async () => {
    h.sys.clock.current = at(10);
    const body = await get(`/ui/fleet/flap-peers/${AS_A}`);
    const listed = (await get('/ui/fleet/flap-peers')).peers.find((p: Row) => p.asn === AS_A);
    const { prefixes, alerts, generated_at, ...row } = body;
    expect(generated_at).to.equal(iso(10));
    // No alert evaluation has run in this suite: no alerts (the alerts suite below has them).
    expect(alerts).to.deep.equal([]);
    expect(row).to.deep.equal(listed);
    const flat = (await get('/ui/fleet/prefix-flaps?min_score=0.5')).rows.filter((r: Row) => r.peer_asn === AS_A);
    expect(prefixes).to.deep.equal(flat);
    expect(prefixes.map((p: Row) => p.prefix)).to.deep.equal(['172.21.0.0/24', '172.21.1.0/24']);
    // MOAS is judged over every direction of the prefix (C brings origin Y), not only this peer's.
    expect(prefixes[0]).to.deep.include({ peer_asn: AS_A, origin_asn: ORIGIN_X, as_path: [AS_A, ORIGIN_X], moas: true });
    expect(prefixes[0].nodes.map((n: Row) => n.node_id)).to.deep.equal(['n1', 'n2']);
    expect((await get(`/ui/fleet/flap-peers/${AS_A}?prefixes_limit=1`)).prefixes.map((p: Row) => p.prefix)).to.deep.equal(['172.21.0.0/24']);

    // C's 172.22.0.0/24 (0.6 at minute 5, 0.42 now) is under 0.5: counted, not listed.
    const c = await get(`/ui/fleet/flap-peers/${AS_C}`);
    expect(c.prefix_count).to.equal(2);
    expect(c.prefixes.map((p: Row) => [p.prefix, p.origin_asn])).to.deep.equal([['172.21.0.0/24', ORIGIN_Y]]);
    // B has sessions only: an empty prefix list, not a 404.
    const b = await get(`/ui/fleet/flap-peers/${AS_B}`);
    expect(b).to.deep.include({ asn: AS_B, prefixes: [] });
  });

  it('answers 404 for an AS without flap data (a quiet session, our own AS over iBGP, an unknown AS) and 422 for bad parameters', async () => {
    h.sys.clock.current = at(10);
    for (const asn of [AS_D, OWN, 64512]) {
      const res = await h.admin.get(`/ui/fleet/flap-peers/${asn}`);
      expectResponse(res).status(404);
      expect(res.body.detail).to.equal(`no flap data for AS${asn}`);
    }
    for (const path of [
      '0',
      'x',
      '4294967296',
      '-1',
      `${AS_A}?prefixes_limit=0`,
      `${AS_A}?prefixes_limit=201`,
      `${AS_A}?alerts_limit=0`,
      `${AS_A}?alerts_limit=101`,
      `${AS_A}?limit=5`,
    ])
      expectResponse(await h.admin.get(`/ui/fleet/flap-peers/${path}`)).status(422);
    expectResponse(await h.admin.get(`/ui/fleet/flap-peers/${AS_A}?prefixes_limit=200&alerts_limit=100`)).status(200);
  });
});

describe('Console flap peers: alerts[] of the peer detail', function () {
  this.timeout(120_000);
  let h: AgentHarness;
  const SESSIONS: Record<string, Record<string, number>> = { n1: { dn42_a: AS_A }, n2: { dn42_a2: AS_A, dn42_b: AS_B } };

  async function sessions(nodeId: string, down: readonly string[] = []) {
    const body = snapshot(nodeId, {}, { captured_at: h.sys.clock.now().toISOString() });
    body.bgp_protocols = Object.entries(SESSIONS[nodeId]).map(([name, remote_asn]) => ({
      name,
      state: down.includes(name) ? 'idle' : 'established',
      since: '2026-11-03T09:00:00Z',
      remote_asn,
      routes_imported: 1,
      routes_exported: 1,
    }));
    expectResponse(await h.agent[nodeId].post('/agent/runtime-snapshot', body)).status(200);
  }
  const evaluate = () => evaluateFlapAlerts(h.sys.context, h.sys.clock.now());
  async function get(path: string) {
    const res = await h.admin.get(path);
    expectResponse(res).status(200);
    return res.body;
  }
  /** What `/ui/fleet/flap-alerts` answers about A: prefix alerts of its direction, session alerts of its two sessions. */
  async function alertsOfA() {
    const all = (await get('/ui/fleet/flap-alerts?limit=200')).alerts as Row[];
    return all.filter(
      (a) => (a.kind === 'prefix' && a.peer_asn === AS_A) || (a.kind === 'session' && ['n1 dn42_a', 'n2 dn42_a2'].includes(`${a.node_id} ${a.name}`)),
    );
  }

  before(async () => {
    h = await startAgents(['n1', 'n2']);
    h.sys.clock.current = at(0);
    await sessions('n1');
    await sessions('n2');
    // A's session at n2 flaps four times (score about 4: over the session alert line 3).
    for (let i = 0; i < 4; i++) {
      await sessions('n2', ['dn42_a2']);
      await sessions('n2');
    }
    // A's direction of one prefix and B's of another are over the prefix alert line 100.
    const body = {
      node_id: 'n1',
      captured_at: iso(0),
      feed_state: 'established',
      entries: [
        { prefix: '172.21.0.0/24', peer_asn: AS_A, origin_asn: ORIGIN_X, score: 120 },
        { prefix: '172.22.0.0/24', peer_asn: AS_B, origin_asn: ORIGIN_Y, score: 150 },
      ],
    };
    expectResponse(await h.agent.n1.post('/agent/prefix-flaps', body)).status(200);
    expect(await evaluate()).to.include({ opened: 3 });
    // 15 minutes on, A's prefix (120 · 2^-1.5 ≈ 42) is below the close line 50: resolved; its session (4 · 2^-0.5 ≈ 2.8) stays open.
    h.sys.clock.current = at(15);
    expect(await evaluate()).to.include({ resolved: 1 });
  });
  after(async () => h?.close());

  it("lists the peer's prefix alerts and the alerts of its sessions, open and resolved, newest first, and no other peer's", async () => {
    const body = await get(`/ui/fleet/flap-peers/${AS_A}`);
    const expected = await alertsOfA();
    expect(body.alerts).to.deep.equal(expected);
    expect(body.alerts.map((a: Row) => [a.kind, a.active])).to.have.deep.members([
      ['prefix', false],
      ['session', true],
    ]);
    expect(body.alerts.map((a: Row) => a.id)).to.deep.equal([...body.alerts.map((a: Row) => a.id)].sort((x: number, y: number) => y - x));
    expect(body.alerts.find((a: Row) => a.kind === 'session')).to.include({ node_id: 'n2', name: 'dn42_a2' });
    expect((await get(`/ui/fleet/flap-peers/${AS_A}?alerts_limit=1`)).alerts).to.deep.equal(expected.slice(0, 1));
    const b = await get(`/ui/fleet/flap-peers/${AS_B}`);
    expect(b.alerts.map((a: Row) => [a.kind, a.prefix, a.peer_asn, a.active])).to.deep.equal([['prefix', '172.22.0.0/24', AS_B, true]]);
  });

  it('keeps a peer whose scores all faded while an alert of it is kept: listed at the bottom, its detail answers the history', async () => {
    // Five hours on every score is below 0.01 and the session alert resolves too.
    h.sys.clock.current = at(300);
    await evaluate();
    const listed = (await get('/ui/fleet/flap-peers')).peers.find((p: Row) => p.asn === AS_A);
    expect(listed).to.deep.include({ prefix_count: 0, prefix_score_max: null, nodes: ['n1', 'n2'] });
    expect(listed.severity).to.be.below(0.01 / 3);
    const body = await get(`/ui/fleet/flap-peers/${AS_A}`);
    expect(body.prefixes).to.deep.equal([]);
    expect(body.alerts).to.deep.equal(await alertsOfA());
    expect(body.alerts.map((a: Row) => a.active)).to.deep.equal([false, false]);
    expect(body.alerts.every((a: Row) => a.resolved_at !== null)).to.equal(true);
  });
});
