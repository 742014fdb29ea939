import { expect } from 'chai';
import { expectResponse } from '../../../../support/http.js';
import { snapshot, startAgents, type AgentHarness } from '../../agent/telemetry-support.js';

/** Document 3: session score half-life 30 minutes. */
const HALF_LIFE_S = 1800;
const decayed = (flaps: readonly Date[], now: Date) => flaps.reduce((s, t) => s + Math.pow(2, -(now.getTime() - t.getTime()) / 1000 / HALF_LIFE_S), 0);
const at = (minutes: number) => new Date(Date.UTC(2026, 10, 3, 10, minutes));

interface Proto {
  state: string;
  since?: string;
}

describe('Session flap views (/ui/.../bgp-flaps, bgp-sessions/status, peering-issues)', function () {
  this.timeout(120_000);
  let h: AgentHarness;

  /** Posts a snapshot of `nodeId` at minute `m` of the server clock (captured then too). */
  async function post(nodeId: string, m: number, protocols: Record<string, Proto>) {
    h.sys.clock.current = at(m);
    const body = snapshot(nodeId, {}, { captured_at: at(m).toISOString() });
    body.bgp_protocols = Object.entries(protocols).map(([name, p]) => ({
      name,
      state: p.state,
      since: p.since ?? '2026-11-03T09:00:00Z',
      remote_asn: name.startsWith('ibgp_') ? 4242420000 : 4242420002,
      routes_imported: 1,
      routes_exported: 1,
    }));
    expectResponse(await h.agent[nodeId].post('/agent/runtime-snapshot', body)).status(200);
  }

  const up = { state: 'established' };
  const idle = { state: 'idle' };

  before(async () => {
    h = await startAgents(['f1', 'f2', 'f3']);
    // f1: ebgp_a flaps three times (established -> idle at 0, 10, 20; back up in between); ebgp_b restarts once (since changed at 15);
    // ibgp_f2_v4 stays up. f2: ebgp_c stays idle, ibgp_f1_v4 active. f3 never reports.
    await post('f1', 0, { ebgp_a: up, ebgp_b: up, ibgp_f2_v4: up });
    await post('f2', 0, { ebgp_c: idle, ibgp_f1_v4: { state: 'active' }, ebgp_d: up });
    await post('f1', 5, { ebgp_a: idle, ebgp_b: up, ibgp_f2_v4: up });
    await post('f1', 6, { ebgp_a: { state: 'connect' }, ebgp_b: up, ibgp_f2_v4: up });
    await post('f1', 7, { ebgp_a: up, ebgp_b: up, ibgp_f2_v4: up });
    await post('f1', 10, { ebgp_a: idle, ebgp_b: up, ibgp_f2_v4: up });
    await post('f1', 12, { ebgp_a: up, ebgp_b: up, ibgp_f2_v4: up });
    await post('f1', 15, { ebgp_a: up, ebgp_b: { state: 'established', since: '2026-11-03T10:14:00Z' }, ibgp_f2_v4: up });
    await post('f1', 20, { ebgp_a: idle, ebgp_b: { state: 'established', since: '2026-11-03T10:14:00Z' }, ibgp_f2_v4: up });
  });
  after(async () => h?.close());

  const A_FLAPS = [at(5), at(10), at(20)];

  it('scores each session by the decay formula at the time of the answer; flapping at 3; null never flapped', async () => {
    for (const minutes of [20, 50, 200]) {
      h.sys.clock.current = at(minutes);
      const res = await h.admin.get('/ui/nodes/f1/bgp-sessions/status');
      expectResponse(res).status(200);
      const rows = Object.fromEntries(res.body.sessions.map((s: { name: string }) => [s.name, s]));
      expect(res.body.sessions.map((s: { name: string }) => s.name)).to.deep.equal(['ebgp_a', 'ebgp_b', 'ibgp_f2_v4']);
      expect(rows.ebgp_a.flap_score).to.be.closeTo(decayed(A_FLAPS, at(minutes)), 1e-9);
      expect(rows.ebgp_b.flap_score).to.be.closeTo(decayed([at(15)], at(minutes)), 1e-9);
      expect(rows.ibgp_f2_v4.flap_score).to.equal(null);
      expect(rows.ebgp_a.flapping).to.equal(decayed(A_FLAPS, at(minutes)) >= 3);
    }
    h.sys.clock.current = at(20);
    const res = await h.admin.get('/ui/nodes/f1/bgp-sessions/status');
    const a = res.body.sessions[0];
    // Three flaps, the last one just now: 1 + 2^(-1/3) + 2^(-1/2) < 3, so not yet flapping.
    expect(a).to.include({ name: 'ebgp_a', kind: 'ebgp', state: 'idle', health: 'down', flapping: false });
    expect(res.body.sessions[2]).to.include({ kind: 'ibgp', health: 'up', flapping: false });
  });

  it('answers flap_score 0.0 once a flapped session has decayed (below 0.01), not a vanishing float', async () => {
    // ebgp_b flapped once at minute 15: 2^(-t/30 min) < 0.01 after about 3.3 hours; two days later it reads exactly 0.
    for (const path of ['/ui/nodes/f1/bgp-sessions/status', '/ui/nodes/f1/bgp-flaps']) {
      h.sys.clock.current = at(15 + 2 * 24 * 60);
      const res = await h.admin.get(path);
      expectResponse(res).status(200);
      const b = res.body.sessions.find((s: { name: string }) => s.name === 'ebgp_b');
      expect(b).to.include({ flap_score: 0, flapping: false });
    }
    h.sys.clock.current = at(15 + 190);
    const res = await h.admin.get('/ui/nodes/f1/bgp-sessions/status');
    const b = res.body.sessions.find((s: { name: string }) => s.name === 'ebgp_b');
    expect(b.flap_score)
      .to.be.closeTo(decayed([at(15)], at(15 + 190)), 1e-9)
      .and.to.be.greaterThan(0);
  });

  it('flapping turns true once the score reaches 3 (may be true while Established)', async () => {
    await post('f2', 21, { ebgp_c: idle, ibgp_f1_v4: { state: 'active' }, ebgp_d: up });
    for (const m of [22, 23, 24, 25]) {
      await post('f2', m, { ebgp_c: idle, ibgp_f1_v4: { state: 'active' }, ebgp_d: idle });
      await post('f2', m, { ebgp_c: idle, ibgp_f1_v4: { state: 'active' }, ebgp_d: up });
    }
    h.sys.clock.current = at(25);
    const res = await h.admin.get('/ui/nodes/f2/bgp-sessions/status');
    const d = res.body.sessions.find((s: { name: string }) => s.name === 'ebgp_d');
    // Three flaps within two minutes stay just under 3 (1 + 2^(-1/30) + 2^(-2/30)); the fourth crosses it.
    expect(decayed([at(22), at(23), at(24)], at(24))).to.be.below(3);
    expect(d.flap_score).to.be.closeTo(decayed([at(22), at(23), at(24), at(25)], at(25)), 1e-9);
    expect(d).to.include({ state: 'established', health: 'up', flapping: true });
  });

  it('lists transitions (state and restart) newest first and the flap rows of a node; flaps count leaving Established once', async () => {
    h.sys.clock.current = at(30);
    const res = await h.admin.get('/ui/nodes/f1/bgp-flaps?transitions_limit=3');
    expectResponse(res).status(200);
    expect(res.body.transitions).to.deep.equal([
      { name: 'ebgp_a', session: 'ebgp_a', kind: 'state', from_state: 'established', to_state: 'idle', captured_at: at(20).toISOString() },
      { name: 'ebgp_b', session: 'ebgp_b', kind: 'restart', from_state: 'established', to_state: 'established', captured_at: at(15).toISOString() },
      { name: 'ebgp_a', session: 'ebgp_a', kind: 'state', from_state: 'idle', to_state: 'established', captured_at: at(12).toISOString() },
    ]);
    const a = res.body.sessions.find((s: { name: string }) => s.name === 'ebgp_a');
    // established->idle, idle->connect, connect->established, established->idle, idle->established, established->idle: 6 transitions, 3 flaps.
    expect(a).to.include({ node_id: 'f1', transitions_total: 6, flaps_total: 3, last_transition_at: at(20).toISOString() });
    expect(a.flap_score).to.be.closeTo(decayed(A_FLAPS, at(30)), 1e-9);
    const all = await h.admin.get('/ui/nodes/f1/bgp-flaps');
    expect(all.body.transitions).to.have.length(7);
  });

  it('answers 404 for a node without a report and 422 for a limit out of range', async () => {
    const none = await h.admin.get('/ui/nodes/f3/bgp-flaps');
    expectResponse(none).status(404);
    expect(none.body.detail).to.equal('no runtime status reported for node f3');
    const status = await h.admin.get('/ui/nodes/f3/bgp-sessions/status');
    expectResponse(status).status(404);
    expect(status.body.detail).to.equal('no runtime status reported for node f3');
    for (const q of ['transitions_limit=0', 'transitions_limit=201', 'transitions_limit=x'])
      expectResponse(await h.admin.get(`/ui/nodes/f1/bgp-flaps?${q}`)).status(422);
    for (const q of ['limit=0', 'limit=501', 'min_score=-1', 'min_score=x']) expectResponse(await h.admin.get(`/ui/fleet/bgp-flaps?${q}`)).status(422);
  });

  it('lists the fleet rows with a score at least min_score by score descending', async () => {
    h.sys.clock.current = at(30);
    const res = await h.admin.get('/ui/fleet/bgp-flaps');
    expectResponse(res).status(200);
    expect(res.body.sessions.map((s: { node_id: string; name: string }) => `${s.node_id}/${s.name}`)).to.deep.equal(['f2/ebgp_d', 'f1/ebgp_a', 'f1/ebgp_b']);
    const scores = res.body.sessions.map((s: { flap_score: number }) => s.flap_score);
    expect(scores[1]).to.be.closeTo(decayed(A_FLAPS, at(30)), 1e-9);
    const high = await h.admin.get('/ui/fleet/bgp-flaps?min_score=2&limit=1');
    expect(high.body.sessions.map((s: { name: string }) => s.name)).to.deep.equal(['ebgp_d']);
    // Decayed below the default 0.05 (five half-lives and more): gone from the list, still 0 < score in the node view.
    h.sys.clock.current = at(30 + 60 * 6);
    const later = await h.admin.get('/ui/fleet/bgp-flaps');
    expect(later.body.sessions).to.deep.equal([]);
  });

  it('sorts peering issues flapping first by score, then down, then connecting, eBGP first; the dashboard block equals it', async () => {
    h.sys.clock.current = at(25);
    const res = await h.admin.get('/ui/fleet/peering-issues');
    expectResponse(res).status(200);
    expect(res.body.map((s: { node_id: string; name: string; issue: string }) => `${s.issue} ${s.node_id}/${s.name}`)).to.deep.equal([
      'flapping f2/ebgp_d',
      // ebgp_a has decayed below 3 by 10:25 (2^(-20/30) + 2^(-15/30) + 2^(-5/30)) and is idle: down.
      'down f1/ebgp_a',
      'down f2/ebgp_c',
      'connecting f2/ibgp_f1_v4',
    ]);
    const dashboard = await h.admin.get('/ui/dashboard');
    expectResponse(dashboard).status(200);
    expect(dashboard.body.peering_issues).to.deep.equal(res.body);
  });

  it('answers flap_score null for a session without a record (0.0 once recorded)', async () => {
    // As for a session seen before the read model existed (its rebuild would record it).
    await h.sys.pool.query(`DELETE FROM session_flaps WHERE node_id = 'f1' AND session = 'ibgp_f2_v4'`);
    const res = await h.admin.get('/ui/nodes/f1/bgp-flaps');
    const row = res.body.sessions.find((s: { name: string }) => s.name === 'ibgp_f2_v4');
    expect(row).to.include({ flap_score: null, flapping: false, transitions_total: 0, flaps_total: 0, last_transition_at: null });
  });

  it('leaves decommissioned nodes out of the fleet views', async () => {
    h.sys.clock.current = at(25);
    expectResponse(await h.admin.post('/admin/nodes/f2/decommission')).status(200);
    const issues = await h.admin.get('/ui/fleet/peering-issues');
    expect(issues.body.map((s: { node_id: string }) => s.node_id)).to.deep.equal(['f1']);
    const flaps = await h.admin.get('/ui/fleet/bgp-flaps');
    expect(flaps.body.sessions.map((s: { node_id: string }) => s.node_id)).to.deep.equal(['f1', 'f1']);
  });
});

describe("Session flap scores count from each transition's captured_at (issue 29)", function () {
  this.timeout(120_000);
  let h: AgentHarness;

  /** Posts a snapshot of `nodeId` with ebgp_x in `state`, captured at minute `captured`, at minute `server` of the server clock. */
  async function post(nodeId: string, server: number, captured: number, state: string) {
    h.sys.clock.current = at(server);
    const body = snapshot(nodeId, {}, { captured_at: at(captured).toISOString() });
    body.bgp_protocols = [
      { name: 'ebgp_x', state, since: '2026-11-03T09:00:00Z', remote_asn: 4242420002, routes_imported: 1, routes_exported: 1 },
      { name: 'ebgp_quiet', state: 'established', since: '2026-11-03T09:00:00Z', remote_asn: 4242420003, routes_imported: 1, routes_exported: 1 },
    ];
    expectResponse(await h.agent[nodeId].post('/agent/runtime-snapshot', body)).status(200);
  }

  // ebgp_x drops at minutes 5 and 15 and is back at 10 and 20: two flaps.
  const STEPS: [number, string][] = [
    [0, 'established'],
    [5, 'idle'],
    [10, 'established'],
    [15, 'idle'],
    [20, 'established'],
  ];
  const FLAPS = [at(5), at(15)];

  before(async () => {
    h = await startAgents(['live', 'late', 'ahead']);
    // live: each snapshot as it is captured. late: the same snapshots, held back by the agent and sent in one go at minute 60.
    for (const [m, state] of STEPS) await post('live', m, m, state);
    for (const [m, state] of STEPS) await post('late', 60, m, state);
    // ahead: an agent clock 65 minutes ahead of the server; the drop reaches the server at minute 5.
    await post('ahead', 0, 65, 'established');
    await post('ahead', 5, 70, 'idle');
  });
  after(async () => h?.close());

  const sessionOf = async (path: string, name = 'ebgp_x') => {
    const res = await h.admin.get(path);
    expectResponse(res).status(200);
    return res.body.sessions.find((s: { name: string }) => s.name === name);
  };

  it('scores a batch of old snapshots sent in one go as old as they are: the same as sent live, not as flaps of just now', async () => {
    for (const minutes of [60, 90]) {
      h.sys.clock.current = at(minutes);
      for (const path of ['bgp-sessions/status', 'bgp-flaps']) {
        const live = await sessionOf(`/ui/nodes/live/${path}`);
        const late = await sessionOf(`/ui/nodes/late/${path}`);
        expect(late.flap_score).to.be.closeTo(decayed(FLAPS, at(minutes)), 1e-9);
        expect(late.flap_score).to.be.closeTo(live.flap_score, 1e-9);
        // Counted from their arrival (minute 60) the two flaps would read 2 at minute 60.
        expect(late.flap_score).to.be.below(decayed([at(60), at(60)], at(minutes)) / 2);
      }
    }
    h.sys.clock.current = at(60);
    const fleet = await h.admin.get('/ui/fleet/bgp-flaps');
    expectResponse(fleet).status(200);
    const rows = Object.fromEntries(fleet.body.sessions.map((s: { node_id: string; name: string }) => [`${s.node_id}/${s.name}`, s]));
    expect(rows['late/ebgp_x'].flap_score).to.be.closeTo(rows['live/ebgp_x'].flap_score, 1e-9);
    expect(rows['late/ebgp_x']).to.include({ flaps_total: 2, last_transition_at: at(20).toISOString() });
  });

  it('never lets a captured_at ahead of the server clock inflate a score: the flap counts from its arrival', async () => {
    // Counted from its captured_at (minute 70) the flap would read 1 until minute 70; from its arrival it is halved by minute 35.
    h.sys.clock.current = at(35);
    const x = await sessionOf('/ui/nodes/ahead/bgp-sessions/status');
    expect(x.flap_score).to.be.closeTo(0.5, 1e-9);
  });

  it('answers null for a session that never flapped in every view, and a number (0.0) for a flapped one decayed', async () => {
    h.sys.clock.current = at(60 + 2 * 24 * 60);
    for (const path of ['/ui/nodes/late/bgp-sessions/status', '/ui/nodes/late/bgp-flaps']) {
      expect(await sessionOf(path, 'ebgp_quiet')).to.include({ flap_score: null, flapping: false });
      expect(await sessionOf(path)).to.include({ flap_score: 0, flapping: false });
    }
    // ebgp_x of 'ahead' is idle and never flapped back: a peering issue whose score decayed to 0.0; ebgp_quiet is no issue.
    const issues = await h.admin.get('/ui/fleet/peering-issues');
    expectResponse(issues).status(200);
    expect(issues.body.map((s: { node_id: string; name: string; flap_score: number | null }) => [s.node_id, s.name, s.flap_score])).to.deep.equal([
      ['ahead', 'ebgp_x', 0],
    ]);
    const peers = await h.admin.get('/ui/fleet/flap-peers/4242420003');
    expectResponse(peers).status(404);
  });
});
