import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { startAgents, type AgentHarness } from '../agent/telemetry-support.js';

const T0 = Date.parse('2026-11-01T12:00:00Z');
const SEC = 1000;
const MIN = 60 * SEC;
const HALF_LIFE_S = 600;
const AS_A = 4242420002;
const AS_B = 4242420003;
const ORIGIN_X = 4242420077;
const ORIGIN_Y = 4242420088;
const at = (ms: number) => new Date(ms).toISOString();
/** The contract's decay: score · 2^(−Δt / 10 min). */
const decayed = (score: number, seconds: number) => score * Math.pow(2, -seconds / HALF_LIFE_S);

type Entry = Record<string, unknown>;

describe('Console prefix flaps: GET /ui/fleet/prefix-flaps from reports posted by agents', function () {
  this.timeout(60_000);
  let h: AgentHarness;

  beforeEach(async () => {
    h = await startAgents(['n1', 'n2']);
    h.sys.clock.current = new Date(T0);
  });
  afterEach(async () => h?.close());

  /** Posts a report of `node` captured now (the test clock) through the real agent endpoint. */
  async function report(node: string, entries: Entry[], extra: Record<string, unknown> = {}) {
    const body = { node_id: node, captured_at: h.sys.clock.now().toISOString(), feed_state: 'established', entries, ...extra };
    expectResponse(await h.agent[node].post('/agent/prefix-flaps', body)).status(200);
  }
  const entry = (prefix: string, peer: number | null, origin: number | null, score: number, extra: Entry = {}): Entry => ({
    prefix,
    peer_asn: peer,
    origin_asn: origin,
    score,
    ...extra,
  });
  const full = (announcements: number, withdrawals: number, path: number[]) => ({ as_path: path, announcements, withdrawals });
  async function list(query = '') {
    const res = await h.admin.get(`/ui/fleet/prefix-flaps${query}`);
    expectResponse(res).status(200);
    return res.body;
  }

  it('decays every score to the time of the answer (half-life 10 min) and marks the list line at 20', async () => {
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 40, { flaps: 40, last_flap_at: at(T0 - 5 * SEC), ...full(20, 20, [AS_A, ORIGIN_X]) })], {
      total_changes: 45,
    });
    let body = await list();
    expect(body.rows).to.have.length(1);
    expect(body.rows[0]).to.deep.include({
      prefix: '172.21.0.0/24',
      peer_asn: AS_A,
      peer_name: null,
      origin_asn: ORIGIN_X,
      origin_name: null,
      as_path: [AS_A, ORIGIN_X],
      moas: false,
    });
    expect(body.rows[0]).to.deep.include({ max_score: 40, flapping: true, total_changes: 40, localization: null });
    h.sys.clock.advance(5 * MIN);
    body = await list();
    expect(body.rows[0].max_score).to.be.closeTo(decayed(40, 300), 1e-9);
    expect(body.rows[0].nodes[0].score).to.be.closeTo(decayed(40, 300), 1e-9);
    expect(body.rows[0].flapping).to.equal(true);
    h.sys.clock.advance(10 * MIN);
    body = await list();
    expect(body.rows[0].max_score).to.be.closeTo(decayed(40, 900), 1e-9);
    expect(body.rows[0]).to.include({ flapping: false, total_changes: 40 });
    expect(body.localization_summary).to.deep.equal({ near: 0, origin: 0, path: 0, moas: 0 });
  });

  it('leaves rows below min_score out (default 1.0) and sorts by the highest node score', async () => {
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 0.9), entry('172.22.0.0/24', AS_A, ORIGIN_X, 5)]);
    await report('n2', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 7)]);
    expect((await list()).rows.map((r: Entry) => [r.prefix, r.max_score])).to.deep.equal([
      ['172.21.0.0/24', 7],
      ['172.22.0.0/24', 5],
    ]);
    const rows = (await list('?min_score=6')).rows;
    expect(rows.map((r: Entry) => r.prefix)).to.deep.equal(['172.21.0.0/24']);
    expect(rows[0].nodes.map((n: Entry) => [n.node_id, n.score])).to.deep.equal([
      ['n2', 7],
      ['n1', 0.9],
    ]);
  });

  it('gives rate_per_s from the previous report of the same node: null without a baseline, 0 for measured quiet', async () => {
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 6, { flaps: 6, ...full(3, 3, [AS_A, ORIGIN_X]) })]);
    let row = (await list()).rows[0];
    expect(row.rate_per_s).to.equal(null);
    expect(row.nodes[0]).to.include({ rate_per_s: null, changes: 6 });
    h.sys.clock.advance(60 * SEC);
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 10, { flaps: 12, ...full(3, 3, [AS_A, ORIGIN_X]) })]);
    row = (await list()).rows[0];
    expect(row.rate_per_s).to.be.closeTo(6 / 60, 1e-12);
    h.sys.clock.advance(120 * SEC);
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 8, { flaps: 12, ...full(0, 0, [AS_A, ORIGIN_X]) })]);
    row = (await list()).rows[0];
    expect(row.rate_per_s).to.equal(0);
    expect(row.nodes[0]).to.include({ rate_per_s: 0, changes: 12 });
  });

  it('sums the rate across nodes and directions, counting only nodes with a baseline', async () => {
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 5, full(1, 1, [AS_A, ORIGIN_X]))]);
    h.sys.clock.advance(100 * SEC);
    await report('n1', [
      entry('172.21.0.0/24', AS_A, ORIGIN_X, 5, full(5, 5, [AS_A, ORIGIN_X])),
      entry('172.21.0.0/24', AS_B, ORIGIN_X, 5, full(10, 0, [AS_B, ORIGIN_X])),
    ]);
    await report('n2', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 9, full(4, 4, [AS_A, ORIGIN_X]))]);
    const row = (await list('?group=prefix')).prefixes[0];
    expect(row.rate_per_s).to.be.closeTo(20 / 100, 1e-12);
    expect(row.nodes.map((n: Entry) => [n.node_id, n.rate_per_s])).to.deep.equal([
      ['n2', null],
      ['n1', 0.2],
    ]);
  });

  it('takes an older agent without as_path, counts and total_changes: rate from the growth of flaps, nulls for the rest', async () => {
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 10, { flaps: 10 })]);
    h.sys.clock.advance(60 * SEC);
    await report('n1', [
      entry('172.21.0.0/24', AS_A, ORIGIN_X, 12, { flaps: 16 }),
      entry('172.22.0.0/24', AS_A, ORIGIN_X, 3, { flaps: 3 }),
      entry('172.23.0.0/24', AS_A, ORIGIN_X, 2),
    ]);
    const body = await list('?min_score=0');
    const byPrefix = new Map(body.rows.map((r: Entry) => [r.prefix, r]));
    expect(byPrefix.get('172.21.0.0/24')).to.deep.include({ as_path: null, total_changes: 16 });
    expect((byPrefix.get('172.21.0.0/24') as Entry).rate_per_s).to.be.closeTo(6 / 60, 1e-12);
    // not in the previous report: no baseline for that key
    expect(byPrefix.get('172.22.0.0/24')).to.deep.include({ rate_per_s: null, total_changes: 3 });
    // no flaps at all: unknown counts, never 0
    expect(byPrefix.get('172.23.0.0/24')).to.deep.include({ rate_per_s: null, total_changes: null });
    expect(body.feeds).to.deep.equal([{ node_id: 'n1', feed_state: 'established', captured_at: at(T0 + 60 * SEC), total_changes: null }]);
  });

  it('groups by prefix: MOAS across peer directions, origins, peers, peer_count, nodes by score', async () => {
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 30, { flaps: 30, ...full(2, 2, [AS_A, AS_A, ORIGIN_X]) })]);
    await report('n2', [
      entry('172.21.0.0/24', AS_B, ORIGIN_Y, 50, { flaps: 50, ...full(1, 0, [AS_B, ORIGIN_Y]) }),
      entry('172.22.0.0/24', AS_B, ORIGIN_Y, 4, { flaps: 4 }),
    ]);
    const body = await list('?group=prefix');
    expect(body.prefixes.map((r: Entry) => r.prefix)).to.deep.equal(['172.21.0.0/24', '172.22.0.0/24']);
    const [moas, single] = body.prefixes;
    expect(moas).to.deep.include({
      peer_asn: AS_B,
      peer_name: null,
      origin_asn: ORIGIN_Y,
      origin_name: null,
      moas: true,
      origins: [
        { asn: ORIGIN_X, name: null },
        { asn: ORIGIN_Y, name: null },
      ],
      peer_count: 2,
      max_score: 50,
      total_changes: 80,
      flapping: true,
      flapping_since: null,
      flap_duration_s: null,
    });
    // Localised as moas, with the row's own origins (the hard rule); the single-direction prefix is not locatable.
    expect(moas.localization).to.deep.include({ zone: 'moas', culprit_asn: null, culprit_edge: null });
    expect(moas.localization.signals.origins).to.deep.equal(moas.origins);
    expect(single.localization).to.equal(null);
    expect(moas.nodes.map((n: Entry) => [n.node_id, n.score, n.changes])).to.deep.equal([
      ['n2', 50, 50],
      ['n1', 30, 30],
    ]);
    expect(moas.peers.map((p: Entry) => [p.peer_asn, p.origin_asn, p.as_path, p.max_score])).to.deep.equal([
      [AS_B, ORIGIN_Y, [AS_B, ORIGIN_Y], 50],
      [AS_A, ORIGIN_X, [AS_A, AS_A, ORIGIN_X], 30],
    ]);
    expect(single).to.deep.include({ moas: false, peer_count: 1, origins: [{ asn: ORIGIN_Y, name: null }], flapping: false });
    // the flat form marks MOAS on every direction of the prefix
    expect((await list()).rows.filter((r: Entry) => r.prefix === '172.21.0.0/24').map((r: Entry) => r.moas)).to.deep.equal([true, true]);
    // limit counts prefixes, in both forms: the flat form keeps every direction of the strongest prefix
    expect((await list('?group=prefix&limit=1')).prefixes.map((r: Entry) => r.prefix)).to.deep.equal(['172.21.0.0/24']);
    expect((await list('?limit=1')).rows.map((r: Entry) => [r.prefix, r.peer_asn])).to.deep.equal([
      ['172.21.0.0/24', AS_B],
      ['172.21.0.0/24', AS_A],
    ]);
  });

  it('keeps one unattributed row (peer_asn null) apart from the attributed ones', async () => {
    await report('n1', [entry('172.20.5.0/24', null, null, 3), entry('172.20.5.0/24', AS_A, ORIGIN_X, 2)]);
    const row = (await list('?group=prefix')).prefixes[0];
    expect(row).to.deep.include({ peer_asn: null, origin_asn: null, peer_count: 2, moas: false, origins: [{ asn: ORIGIN_X, name: null }] });
  });

  it('sets flapping_since only at alert strength (>= 100) and not within 60 s of crossing the line', async () => {
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 120), entry('172.22.0.0/24', AS_A, ORIGIN_X, 60)]);
    h.sys.clock.advance(30 * SEC);
    let rows = (await list()).rows;
    expect(rows.map((r: Entry) => [r.prefix, r.flapping_since, r.flap_duration_s])).to.deep.equal([
      ['172.21.0.0/24', null, null],
      ['172.22.0.0/24', null, null],
    ]);
    h.sys.clock.advance(30 * SEC);
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 130), entry('172.22.0.0/24', AS_A, ORIGIN_X, 60)]);
    h.sys.clock.advance(30 * SEC);
    rows = (await list()).rows;
    expect(rows[0]).to.include({ prefix: '172.21.0.0/24', flapping_since: at(T0), flap_duration_s: 90 });
    expect(rows[1]).to.include({ flapping_since: null, flap_duration_s: null });
    // decayed below the alert line by the time of the answer: mid band, no since
    h.sys.clock.advance(5 * MIN);
    expect((await list()).rows[0]).to.include({ flapping_since: null, flap_duration_s: null });
    // back at strength after falling below: a new run starts
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 90)]);
    h.sys.clock.advance(2 * MIN);
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 110)]);
    h.sys.clock.advance(61 * SEC);
    expect((await list()).rows[0]).to.include({ flapping_since: at(h.sys.clock.now().getTime() - 61 * SEC), flap_duration_s: 61 });
  });

  it('lists feeds with their state and total_changes, stale after 5 minutes without a report', async () => {
    await report('n1', [], { total_changes: 0 });
    await report('n2', [], { feed_state: 'unknown', total_changes: 7 });
    let feeds = (await list()).feeds;
    expect(feeds).to.deep.equal([
      { node_id: 'n1', feed_state: 'established', captured_at: at(T0), total_changes: 0 },
      { node_id: 'n2', feed_state: 'unknown', captured_at: at(T0), total_changes: 7 },
    ]);
    h.sys.clock.advance(5 * MIN);
    await report('n2', [], { feed_state: 'down', total_changes: 0 });
    feeds = (await list()).feeds;
    expect(feeds.map((f: Entry) => f.feed_state)).to.deep.equal(['established', 'down']);
    h.sys.clock.advance(1 * SEC);
    feeds = (await list()).feeds;
    expect(feeds.map((f: Entry) => f.feed_state)).to.deep.equal(['stale', 'down']);
  });

  it('leaves decommissioned and deleted nodes out', async () => {
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 5)]);
    await report('n2', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 9)]);
    expectResponse(await h.admin.post('/admin/nodes/n2/decommission')).status(200);
    let body = await list();
    expect(body.rows[0].nodes.map((n: Entry) => n.node_id)).to.deep.equal(['n1']);
    expect(body.feeds.map((f: Entry) => f.node_id)).to.deep.equal(['n1']);
    expectResponse(await h.admin.delete('/admin/nodes/n1')).status(204);
    body = await list();
    expect(body).to.deep.include({ rows: [], feeds: [] });
  });

  it('answers at most 500 rows, and 422 for a bad min_score, limit or group', async () => {
    const many = Array.from({ length: 600 }, (_, i) => entry(`172.${20 + Math.floor(i / 256)}.${i % 256}.0/24`, AS_A, ORIGIN_X, 2 + i / 1000));
    await report('n1', many);
    expect((await list()).rows).to.have.length(100);
    expect((await list('?limit=500')).rows).to.have.length(500);
    expect((await list('?limit=500&group=prefix')).prefixes).to.have.length(500);
    for (const q of ['limit=0', 'limit=501', 'limit=x', 'limit=1.5', 'min_score=-1', 'min_score=abc', 'group=peer', 'other=1']) {
      const res = await h.admin.get(`/ui/fleet/prefix-flaps?${q}`);
      expect(res.status, q).to.equal(422);
      expect(res.body.detail, q).to.not.equal(undefined);
    }
  });

  it('refuses a report whose new fields are malformed, and keeps the previous rows', async () => {
    await report('n1', [entry('172.21.0.0/24', AS_A, ORIGIN_X, 5)]);
    const bad = { node_id: 'n1', captured_at: at(T0), feed_state: 'established', entries: [entry('172.22.0.0/24', AS_A, ORIGIN_X, 5, { announcements: -1 })] };
    expectResponse(await h.agent.n1.post('/agent/prefix-flaps', bad)).status(422);
    expectResponse(await h.agent.n1.post('/agent/prefix-flaps', { ...bad, entries: [], total_changes: 'many' })).status(422);
    expectResponse(await h.agent.n1.post('/agent/prefix-flaps', { ...bad, entries: [entry('172.22.0.0/24', AS_A, ORIGIN_X, 5, { as_path: [0] })] })).status(
      422,
    );
    expect((await list()).rows.map((r: Entry) => r.prefix)).to.deep.equal(['172.21.0.0/24']);
  });
});
