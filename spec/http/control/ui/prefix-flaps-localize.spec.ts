import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { anonymous, snapshot, startAgents, type AgentHarness } from '../agent/telemetry-support.js';

const T0 = Date.parse('2026-11-01T12:00:00Z');
const MIN = 60_000;
// n1 peers with AS_A, n2 with AS_B, n3 with AS_C; T and U are transit; X, Y, Z origins.
const AS_A = 4242420002;
const AS_B = 4242420003;
const AS_C = 4242420004;
const T = 4242420050;
const U = 4242420051;
const X = 4242420077;
const Y = 4242420088;
const Z = 4242420099;
const PEER_OF: Record<string, number> = { n1: AS_A, n2: AS_B, n3: AS_C };

type Entry = Record<string, any>;

describe('Prefix flap localisation: /ui/fleet/prefix-flaps (embedded) and /ui/fleet/prefix-flaps/localize', function () {
  this.timeout(60_000);
  let h: AgentHarness;

  beforeEach(async () => {
    h = await startAgents(['n1', 'n2', 'n3']);
  });
  afterEach(async () => h?.close());

  /** A runtime snapshot of `node` at `ms` whose one eBGP session to its peer came up at `since`. */
  async function sessionAt(node: string, ms: number, since: number) {
    h.sys.clock.current = new Date(ms);
    const body = snapshot(node, {}, { captured_at: new Date(ms).toISOString() });
    body.bgp_protocols = [
      { name: `ebgp_${node}`, state: 'established', since: new Date(since).toISOString(), remote_asn: PEER_OF[node], routes_imported: 9, routes_exported: 9 },
    ];
    expectResponse(await h.agent[node].post('/agent/runtime-snapshot', body)).status(200);
  }

  /** A prefix-flaps report of `node` at T0 with entries [prefix, AS path, score]. */
  async function report(node: string, entries: [string, number[] | null, number][]) {
    h.sys.clock.current = new Date(T0);
    const body = {
      node_id: node,
      captured_at: new Date(T0).toISOString(),
      feed_state: 'established',
      entries: entries.map(([prefix, path, score]) => ({
        prefix,
        peer_asn: path ? path[0] : PEER_OF[node],
        origin_asn: path ? path.at(-1) : X,
        score,
        ...(path ? { as_path: path, announcements: 3, withdrawals: 1 } : {}),
      })),
    };
    expectResponse(await h.agent[node].post('/agent/prefix-flaps', body)).status(200);
  }

  async function get(path: string) {
    const res = await h.admin.get(path);
    expectResponse(res).status(200);
    return res.body;
  }

  /**
   * The fleet of the specs: n1's session to AS_A restarts four times (session score about 4, flapping), so
   * 172.21.1.0/24 flapping only at n1 over AS_A is near; 172.21.2.0/24 flaps over all three directions (origin Y);
   * 172.21.3.0/24 and 172.21.4.0/24 (origins X and Z) flap over T→U from n2 and n3 (path); 172.21.5.0/24 is MOAS.
   */
  async function fleet() {
    for (const [i, m] of [-6, -5, -4, -3, -2].entries()) {
      await sessionAt('n1', T0 + m * MIN, T0 + (m - 1) * MIN + (i ? 0 : -60 * MIN));
      await sessionAt('n2', T0 + m * MIN, T0 - 60 * MIN);
      await sessionAt('n3', T0 + m * MIN, T0 - 60 * MIN);
    }
    await report('n1', [
      ['172.21.1.0/24', [AS_A, X], 80],
      ['172.21.2.0/24', [AS_A, Y], 60],
      ['172.21.5.0/24', [AS_A, X], 40],
    ]);
    await report('n2', [
      ['172.21.2.0/24', [AS_B, T, Y], 55],
      ['172.21.3.0/24', [AS_B, T, U, X], 50],
      ['172.21.5.0/24', [AS_B, Z], 35],
      ['172.21.1.0/24', [AS_B, X], 1],
    ]);
    await report('n3', [
      ['172.21.2.0/24', [AS_C, Y], 50],
      ['172.21.4.0/24', [AS_C, T, U, Z], 45],
    ]);
  }

  it('embeds each prefix localisation in the grouped rows, by zone, under the contract rules', async () => {
    await fleet();
    const body = await get('/ui/fleet/prefix-flaps?group=prefix');
    const byPrefix: Record<string, Entry> = Object.fromEntries(body.prefixes.map((r: Entry) => [r.prefix, r]));
    expect(byPrefix['172.21.1.0/24'].localization).to.deep.include({ zone: 'near', culprit_asn: AS_A, culprit_edge: null });
    expect(byPrefix['172.21.1.0/24'].localization.signals).to.include({ session_flapping: true });
    expect(byPrefix['172.21.1.0/24'].localization.signals.session_score).to.be.at.least(3);
    expect(byPrefix['172.21.1.0/24'].localization.confidence).to.be.at.least(0.8);
    expect(byPrefix['172.21.2.0/24'].localization).to.deep.include({ zone: 'origin', culprit_asn: Y, culprit_edge: null });
    expect(byPrefix['172.21.2.0/24'].localization.signals.flap_nodes).to.deep.equal(['n1', 'n2', 'n3']);
    for (const p of ['172.21.3.0/24', '172.21.4.0/24'])
      expect(byPrefix[p].localization).to.deep.include({ zone: 'path', culprit_asn: null, culprit_edge: [T, U] });
    const moas = byPrefix['172.21.5.0/24'];
    expect(moas.moas).to.equal(true);
    expect(moas.localization).to.deep.include({ zone: 'moas', culprit_asn: null, culprit_edge: null });
    expect(moas.localization.signals.origins).to.deep.equal(moas.origins);
    expect(body.localization_summary).to.deep.equal({ near: 1, origin: 1, path: 2, moas: 1 });
    for (const r of body.prefixes) {
      const l = r.localization;
      expect(l === null || (l.confidence >= 0 && l.confidence <= 1)).to.equal(true);
      // moas if and only if the row is MOAS with equal origins
      expect(l?.zone === 'moas').to.equal(r.moas && JSON.stringify(l?.signals.origins) === JSON.stringify(r.origins));
      expect(l?.signals.withdrawal_ratio ?? 0.25).to.equal(0.25);
    }
  });

  it('counts the summary over every selected prefix, the ones cut by limit included, and flat rows carry their prefix localisation', async () => {
    await fleet();
    const grouped = await get('/ui/fleet/prefix-flaps?group=prefix&limit=1');
    expect(grouped.prefixes.map((r: Entry) => r.prefix)).to.deep.equal(['172.21.1.0/24']);
    expect(grouped.localization_summary).to.deep.equal({ near: 1, origin: 1, path: 2, moas: 1 });
    // A min_score above a prefix leaves it out of the selection and so of the counts.
    expect((await get('/ui/fleet/prefix-flaps?group=prefix&min_score=56')).localization_summary).to.deep.equal({ near: 1, origin: 1, path: 0, moas: 0 });
    const flat = await get('/ui/fleet/prefix-flaps?min_score=0');
    const grouped2 = await get('/ui/fleet/prefix-flaps?group=prefix&min_score=0');
    const ofPrefix = new Map(grouped2.prefixes.map((r: Entry) => [r.prefix, r.localization]));
    for (const r of flat.rows) expect(r.localization).to.deep.equal(ofPrefix.get(r.prefix));
    expect(flat.localization_summary).to.deep.equal(grouped2.localization_summary);
  });

  it('lists every located prefix by confidence descending with its prefix, the same objects as the embedded form', async () => {
    await fleet();
    const { localizations } = await get('/ui/fleet/prefix-flaps/localize');
    expect(localizations.map((l: Entry) => l.prefix).sort()).to.deep.equal([
      '172.21.1.0/24',
      '172.21.2.0/24',
      '172.21.3.0/24',
      '172.21.4.0/24',
      '172.21.5.0/24',
    ]);
    const confidences = localizations.map((l: Entry) => l.confidence);
    expect(confidences).to.deep.equal([...confidences].sort((a, b) => b - a));
    const grouped = await get('/ui/fleet/prefix-flaps?group=prefix');
    const ofPrefix = new Map(grouped.prefixes.map((r: Entry) => [r.prefix, r.localization]));
    for (const { prefix, ...l } of localizations) expect(l).to.deep.equal(ofPrefix.get(prefix));
  });

  it('answers an empty list and null localisations when nothing is locatable; an older agent alone says nothing', async () => {
    expect(await get('/ui/fleet/prefix-flaps/localize')).to.deep.equal({ localizations: [] });
    await report('n1', [['172.21.9.0/24', null, 90]]);
    expect((await get('/ui/fleet/prefix-flaps?group=prefix')).prefixes[0].localization).to.equal(null);
    expect(await get('/ui/fleet/prefix-flaps/localize')).to.deep.equal({ localizations: [] });
  });

  it('refuses the endpoint without the admin token', async () => {
    const res = await anonymous(h).get('/ui/fleet/prefix-flaps/localize');
    expect(res.status).to.equal(401);
  });
});
