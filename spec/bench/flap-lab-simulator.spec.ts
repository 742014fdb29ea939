import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { expect } from 'chai';
import { PrefixFlapsSchema, RuntimeSnapshotSchema } from '../../domain/telemetry/reports.js';
import { runScenario, startLab, type Lab } from '../support/flap-lab/lab.js';
import { generateScenario, ZONES, type GroundTruth, type Scenario, type Zone as GroundTruthZone } from '../support/flap-lab/scenarios.js';
import { figures, isRight, scoreScenario, type Localization } from '../support/flap-lab/score.js';
import { simulate, type Simulation } from '../support/flap-lab/simulate.js';
import { edgeKey, Routing } from '../support/flap-lab/topology.js';

/** The flap lab's simulator (spec/support/flap-lab/): ground truth, report format, determinism, and the real endpoints taking it all. */

const SEED = 20261125;
// ajv-formats ships CommonJS; its default export arrives wrapped under ESM (as in http/shared/routes.ts).
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
const ids = (s: Scenario) => s.topology.nodes.map((_, k) => `sim${s.index}n${k}`);
const run = (index: number, seed = SEED): [Scenario, Simulation] => {
  const s = generateScenario(seed, index);
  return [s, simulate(s, ids(s))];
};
/** `node:peer` directions of a trace as [node, peer]. */
const directions = (set: Set<string>) => [...set].map((d) => d.split(':').map(Number));

describe('Flap lab simulator', () => {
  it('gives the same scenarios and the same reports for the same seed, and others for another seed', () => {
    for (const index of [0, 1, 2, 3, 9]) {
      const [a, simA] = run(index);
      const [b, simB] = run(index);
      expect(JSON.stringify(simB.posts)).to.equal(JSON.stringify(simA.posts));
      expect(b.truth).to.deep.equal(a.truth);
      expect(simB.faulted).to.deep.equal(simA.faulted);
      const [, other] = run(index, SEED + 1);
      expect(JSON.stringify(other.posts)).to.not.equal(JSON.stringify(simA.posts));
    }
  });

  it('takes turns over the four fault zones and puts each fault where its ground truth says', () => {
    for (let index = 0; index < 40; index++) {
      const [s, sim] = run(index);
      expect(s.truth.zone, `scenario ${index}`).to.equal(ZONES[index % 4]);
      expect(sim.faulted, `${s.description}: faulted prefixes`).to.not.be.empty;
      const faultDirections = sim.faulted.map((p) => directions(sim.traces.get(p)!.fault));
      switch (s.truth.zone) {
        case 'near': {
          // Every faulted prefix changed at one node, over the culprit's session only.
          const [node, peer] = faultDirections[0][0];
          expect(peer).to.equal(s.truth.culprit_asn);
          expect(s.topology.nodes[node].peers).to.include(peer);
          for (const d of faultDirections) expect(d).to.deep.equal([[node, peer]]);
          break;
        }
        case 'origin': {
          // The culprit's own prefixes, changed at every node over every session that has a route.
          expect(sim.faulted.every((p) => s.topology.prefixes.find((x) => x.prefix === p)!.origin === s.truth.culprit_asn)).to.equal(true);
          const routing = new Routing(s.topology);
          const reaching = s.topology.nodes.flatMap(({ peers }, n) =>
            peers.filter((peer) => routing.path(peer, [s.truth.culprit_asn!], new Set())).map((peer) => [n, peer]),
          );
          for (const d of faultDirections) expect(d).to.have.deep.members(reaching);
          break;
        }
        case 'path': {
          // Only routes whose usual path crosses the link changed; prefixes of two origins or more, at two nodes or more.
          const [a, b] = s.truth.culprit_edge!;
          const routing = new Routing(s.topology);
          const link = edgeKey(a, b);
          sim.faulted.forEach((prefix, i) => {
            const origin = s.topology.prefixes.find((x) => x.prefix === prefix)!.origin;
            for (const [n, peer] of faultDirections[i]) {
              const path = routing.path(peer, [origin], new Set())!;
              const links = path.slice(1).map((asn, j) => edgeKey(path[j], asn));
              expect(links, `${prefix} at node ${n} via AS${peer}`).to.include(link);
            }
          });
          expect(new Set(sim.faulted.map((p) => s.topology.prefixes.find((x) => x.prefix === p)!.origin)).size).to.be.at.least(2);
          expect(new Set(faultDirections.flat().map(([n]) => n)).size).to.be.at.least(2);
          break;
        }
        case 'moas': {
          // One prefix, two origins, both announcing at the end, each reached from two nodes or more ...
          expect(sim.faulted).to.deep.equal(s.targets);
          const last = new Map<number, boolean>();
          for (const t of s.toggles) if (t.kind === 'announce' && t.cause === 'fault') last.set(t.origin, t.up);
          expect([...last.keys()].sort()).to.deep.equal(s.truth.origins);
          expect([...last.values()]).to.deep.equal([true, true]);
          // ... early enough for every node's last report to show both.
          expect(Math.max(...s.toggles.filter((t) => t.cause === 'fault').map((t) => t.at))).to.be.at.most(s.end - 2 * 60_000);
          const routing = new Routing(s.topology);
          for (const o of s.truth.origins!) {
            const nodes = s.topology.nodes.filter(({ peers }) => peers.some((peer) => routing.path(peer, s.truth.origins!, new Set())?.at(-1) === o));
            expect(nodes.length, `nodes with a direction to AS${o}`).to.be.at.least(2);
          }
          break;
        }
      }
    }
  });

  it("produces reports in the agents' format: schema-valid, older agents without the new fields, feeds down or silent as the noise says", () => {
    const validFlaps = ajv.compile(PrefixFlapsSchema);
    const validSnapshot = ajv.compile(RuntimeSnapshotSchema);
    let older = 0;
    let birdDown = 0;
    let silent = 0;
    for (let index = 0; index < 24; index++) {
      const [s, sim] = run(index);
      for (const post of sim.posts) {
        const valid = post.kind === 'prefix-flaps' ? validFlaps : validSnapshot;
        expect(valid(post.body), `${post.kind} of scenario ${index}: ${JSON.stringify(valid.errors)}`).to.equal(true);
        if (post.kind !== 'prefix-flaps') continue;
        const body = post.body as { total_changes?: number; feed_state: string; entries: Record<string, unknown>[] };
        if (post.node === s.oldAgent) {
          older++;
          expect(body).to.not.have.property('total_changes');
          for (const e of body.entries) expect(e).to.have.all.keys('prefix', 'peer_asn', 'origin_asn', 'score', 'flaps', 'last_flap_at');
        } else expect(body.total_changes).to.be.a('number');
        if (s.feed?.mode === 'bird-down' && post.node === s.feed.node && post.at >= s.feed.from && (s.feed.to === null || post.at < s.feed.to)) {
          birdDown++;
          expect(body.feed_state).to.equal('down');
        }
      }
      if (s.feed?.mode === 'silent') {
        silent++;
        expect(sim.posts.filter((p) => p.node === s.feed!.node && p.at >= s.feed!.from)).to.deep.equal([]);
      }
    }
    expect(older, 'reports of older agents among the scenarios').to.be.above(0);
    expect(birdDown, 'reports while BIRD was down').to.be.above(0);
    expect(silent, 'scenarios with a silent agent').to.be.above(0);
  });

  describe('through the real endpoints', function () {
    this.timeout(120_000);
    let lab: Lab;
    before(async () => {
      lab = await startLab();
    });
    after(async () => lab?.close());

    it('has every report accepted and the view shows each fault where it was injected', async function () {
      this.timeout(120_000);
      for (let index = 0; index < 4; index++) {
        // runScenario throws on any report the server does not answer 200.
        const r = await runScenario(lab, SEED, index);
        const { truth } = r.scenario;
        const nodeIds = r.scenario.topology.nodes.map((_, k) => `fl${index}n${k}`);
        expect(r.faultedRows.length, r.scenario.description).to.equal(r.simulation.faulted.length);
        const primary = r.faultedRows.sort((a, b) => b.max_score - a.max_score)[0];
        switch (truth.zone) {
          case 'near': {
            const [[node]] = directions(r.simulation.traces.get(primary.prefix)!.fault);
            expect(primary.nodes.map((n: { node_id: string }) => n.node_id)).to.deep.equal([nodeIds[node]]);
            expect(primary.peer_asn).to.equal(truth.culprit_asn);
            break;
          }
          case 'origin':
            expect(primary.origin_asn).to.equal(truth.culprit_asn);
            expect(primary.nodes.length).to.be.at.least(2);
            break;
          case 'path': {
            const [a, b] = truth.culprit_edge!;
            const crossing = r.faultedRows
              .flatMap((row) => row.peers)
              .filter((p: { as_path: number[] | null }) => p.as_path?.some((asn, j) => edgeKey(asn, p.as_path![j + 1] ?? 0) === edgeKey(a, b)));
            expect(crossing.length, 'directions whose reported path crosses the link').to.be.above(0);
            break;
          }
          case 'moas':
            expect(primary).to.include({ moas: true });
            expect(primary.origins.map((o: { asn: number }) => o.asn)).to.have.members(truth.origins!);
            break;
        }
        // The scenario's nodes are gone afterwards: the next one starts from an empty fleet.
        const after = await lab.admin.get('/ui/fleet/prefix-flaps?group=prefix&min_score=0&limit=500');
        expect(after.body.prefixes).to.deep.equal([]);
        expect(after.body.feeds).to.deep.equal([]);
      }
    });
  });
});

describe('Flap lab scoring', () => {
  const truth = (zone: GroundTruthZone, extra: Partial<GroundTruth> = {}): GroundTruth => ({
    zone,
    culprit_asn: null,
    culprit_edge: null,
    origins: null,
    ...extra,
  });
  const loc = (zone: string, confidence: number, extra: Partial<Localization> = {}): Localization => ({
    zone,
    confidence,
    culprit_asn: null,
    culprit_edge: null,
    ...extra,
  });

  it('needs the zone and the culprit: peer or origin AS, the link in either order, both MOAS origins', () => {
    expect(isRight(loc('near', 0.9, { culprit_asn: 7 }), truth('near', { culprit_asn: 7 }))).to.equal(true);
    expect(isRight(loc('near', 0.9, { culprit_asn: 8 }), truth('near', { culprit_asn: 7 }))).to.equal(false);
    expect(isRight(loc('origin', 0.9, { culprit_asn: 7 }), truth('near', { culprit_asn: 7 }))).to.equal(false);
    expect(isRight(loc('path', 0.5, { culprit_edge: [2, 1] }), truth('path', { culprit_edge: [1, 2] }))).to.equal(true);
    expect(isRight(loc('path', 0.5, { culprit_edge: [1, 3] }), truth('path', { culprit_edge: [1, 2] }))).to.equal(false);
    expect(isRight(loc('moas', 0.5, { signals: { origins: [{ asn: 5 }, { asn: 4 }] } }), truth('moas', { origins: [4, 5] }))).to.equal(true);
    expect(isRight(loc('moas', 0.5, { signals: { origins: [4] } }), truth('moas', { origins: [4, 5] }))).to.equal(false);
  });

  it('answers a scenario with its strongest faulted row and counts every confident wrong localisation, noise rows included', () => {
    const near = truth('near', { culprit_asn: 7 });
    const score = scoreScenario({
      index: 0,
      truth: near,
      description: '',
      faulted: ['a', 'b', 'c'],
      rows: [
        { prefix: 'a', max_score: 5, localization: loc('origin', 0.95, { culprit_asn: 9 }) },
        { prefix: 'b', max_score: 30, localization: loc('near', 0.7, { culprit_asn: 7 }) },
        { prefix: 'c', max_score: 2, localization: null },
      ],
      noise: [
        { row: { prefix: 'n1', max_score: 1, localization: loc('near', 0.85, { culprit_asn: 3 }) }, truth: truth('origin', { culprit_asn: 4 }) },
        { row: { prefix: 'n2', max_score: 1, localization: null }, truth: near },
      ],
    });
    expect(score).to.deep.include({ located: true, right: true, rows: { listed: 3, located: 2, right: 1 } });
    expect(score.primary?.prefix).to.equal('b');
    expect(score.wrongConfident.map((w) => w.prefix)).to.deep.equal(['a', 'n1']);
    expect(score.noise).to.deep.equal({ listed: 2, located: 1, right: 0, wrongConfident: 1 });
    const f = figures([score, { ...score, located: false, right: false, wrongConfident: [] }]);
    expect(f).to.deep.include({ scenarios: 2, located: 1, right: 1, recall: 0.5, precision: 1, wrong_confident: 2 });
  });
});
