import { expect } from 'chai';
import { localizationSummary, localizePrefixes, withNames, type SessionScores } from '../../../domain/flaps/localize.js';
import { prefixRows, type NodePrefixFlap } from '../../../domain/flaps/prefix-rows.js';

const NOW = Date.parse('2026-11-03T10:00:00Z');
const AT = new Date(NOW).toISOString();
// Peers of our nodes (first hops), transit, origins.
const A = 4242420001;
const B = 4242420002;
const C = 4242420003;
const T = 4242420050;
const U = 4242420051;
const O1 = 4242420101;
const O2 = 4242420102;
const O3 = 4242420103;
const O4 = 4242420104;
const X1 = 4242420052;
const D = 4242420004;

function row(node_id: string, prefix: string, path: number[] | null, score: number, extra: Partial<NodePrefixFlap> = {}): NodePrefixFlap {
  return {
    node_id,
    prefix,
    peer_asn: path?.[0] ?? null,
    origin_asn: path?.at(-1) ?? null,
    score,
    flaps: null,
    last_flap_at: null,
    captured_at: AT,
    as_path: path,
    announcements: null,
    withdrawals: null,
    changes: null,
    interval_s: null,
    alert_since: null,
    ...extra,
  };
}

const sessions = (entries: Record<string, Record<number, number | null>>): SessionScores =>
  new Map(Object.entries(entries).map(([node, peers]) => [node, new Map(Object.entries(peers).map(([asn, s]) => [Number(asn), s]))]));
const NO_SESSIONS = sessions({});
const locate = (rows: NodePrefixFlap[], s: SessionScores = NO_SESSIONS) => localizePrefixes(rows, s, null, NOW);

describe('domain/flaps/localize', () => {
  describe('near', () => {
    it('names the peer of a flapping session at one node as the culprit, with the session signals', () => {
      const rows = [row('n1', '172.20.1.0/24', [A, T, O1], 60, { announcements: 3, withdrawals: 1 }), row('n2', '172.20.1.0/24', [B, T, O1], 2)];
      const l = locate(rows, sessions({ n1: { [A]: 4.5 }, n2: { [B]: 0 } })).get('172.20.1.0/24')!;
      expect(l).to.deep.include({ zone: 'near', culprit_asn: A, culprit_name: null, culprit_edge: null, representative_path: [A, T, O1] });
      expect(l.confidence).to.be.at.least(0.8);
      expect(l.signals).to.deep.equal({
        separation: Math.round((60 / 62) * 1000) / 1000,
        withdrawal_ratio: 0.25,
        flap_nodes: ['n1'],
        origins: null,
        session_flapping: true,
        session_score: 4.5,
      });
    });

    it('locates prefixes of several origins flapping only over one session as near without a session flap, below 0.8', () => {
      const rows = [row('n1', '172.20.1.0/24', [A, O1], 40), row('n1', '172.20.2.0/24', [A, T, O2], 35), row('n2', '172.20.2.0/24', [B, T, O2], 1)];
      const out = locate(rows, sessions({ n1: { [A]: 0 } }));
      for (const prefix of ['172.20.1.0/24', '172.20.2.0/24']) {
        const l = out.get(prefix)!;
        expect(l).to.deep.include({ zone: 'near', culprit_asn: A });
        expect(l.signals).to.include({ session_flapping: false, session_score: 0 });
        expect(l.confidence).to.be.below(0.8);
      }
    });

    it('takes the one node with its own session to the peer as the entry when others relay the route', () => {
      const rows = [row('n1', '172.20.1.0/24', [A, O1], 50), row('n2', '172.20.1.0/24', [A, O1], 45)];
      const l = locate(rows, sessions({ n1: { [A]: 5 }, n2: { [B]: 0 } })).get('172.20.1.0/24')!;
      expect(l).to.deep.include({ zone: 'near', culprit_asn: A });
      expect(l.signals.flap_nodes).to.deep.equal(['n1', 'n2']);
    });

    it('gives null for one prefix flapping over one direction at one node with nothing else to tell near from origin', () => {
      expect(locate([row('n1', '172.20.1.0/24', [A, O1], 80)]).get('172.20.1.0/24')).to.equal(null);
    });
  });

  describe('origin', () => {
    it('names the origin of a prefix flapping over every direction it is seen from, whatever the path', () => {
      const rows = [row('n1', '172.20.1.0/24', [A, T, O1], 50), row('n2', '172.20.1.0/24', [B, U, O1], 45), row('n3', '172.20.1.0/24', [C, O1], 40)];
      const l = locate(rows).get('172.20.1.0/24')!;
      expect(l).to.deep.include({ zone: 'origin', culprit_asn: O1, culprit_edge: null, representative_path: [A, T, O1] });
      expect(l.signals).to.include({ origins: null, session_flapping: null, session_score: null });
      expect(l.signals.flap_nodes).to.deep.equal(['n1', 'n2', 'n3']);
      expect(l.confidence).to.be.at.least(0.8);
    });

    it('is less sure when a direction sees the prefix without it flapping, and when the agents sent no AS path', () => {
      const everywhere = locate([row('n1', 'p', [A, O1], 50), row('n2', 'p', [B, O1], 45)]).get('p')!;
      const quietOne = locate([row('n1', 'p', [A, O1], 50), row('n2', 'p', [B, O1], 45), row('n3', 'p', [C, O1], 2)]).get('p')!;
      const oldAgents = locate([row('n1', 'p', null, 50, { peer_asn: A, origin_asn: O1 }), row('n2', 'p', null, 45, { peer_asn: B, origin_asn: O1 })]).get(
        'p',
      )!;
      expect(quietOne.zone).to.equal('origin');
      expect(quietOne.confidence).to.be.below(everywhere.confidence);
      expect(oldAgents).to.deep.include({ zone: 'origin', culprit_asn: O1, representative_path: [A, O1] });
      expect(oldAgents.confidence).to.be.below(everywhere.confidence);
      expect(oldAgents.signals.withdrawal_ratio).to.equal(null);
    });
  });

  describe('path', () => {
    it('names the edge the flapping paths of different origins share, seen from several vantage points', () => {
      const rows = [
        row('n1', '172.20.1.0/24', [A, T, U, O1], 50),
        row('n2', '172.20.1.0/24', [B, T, U, O1], 40),
        row('n1', '172.20.2.0/24', [A, T, U, O2], 45),
        row('n3', '172.20.3.0/24', [C, T, U, O3], 30),
      ];
      const out = locate(rows);
      for (const prefix of ['172.20.1.0/24', '172.20.2.0/24', '172.20.3.0/24']) {
        const l = out.get(prefix)!;
        expect(l).to.deep.include({ zone: 'path', culprit_asn: null, culprit_name: null, culprit_edge: [T, U] });
        expect(l.representative_path).to.include.members([T, U]);
        expect(l.signals).to.include({ origins: null, session_flapping: null, session_score: null });
      }
    });

    it('gives null when fewer than 70 % of the prefix flapping paths cross the edge', () => {
      const rows = [
        row('n1', 'p1', [A, T, U, O1], 90),
        row('n2', 'p1', [B, X1, O1], 90),
        row('n1', 'p2', [A, T, U, O2], 90),
        row('n3', 'p3', [C, T, U, O3], 90),
      ];
      expect(locate(rows).get('p1')).to.equal(null);
      expect(locate(rows).get('p2')).to.deep.include({ zone: 'path', culprit_edge: [T, U] });
    });

    it('gives null when two edges of one shared segment explain the flap equally (no coin toss)', () => {
      const rows = [row('n1', 'p1', [A, T, U, O1], 50), row('n2', 'p2', [A, T, U, O2], 45)];
      expect(locate(rows).get('p1')).to.equal(null);
      expect(locate(rows).get('p2')).to.equal(null);
    });

    it('never says 0.8 for a path, and less when some flapping paths of the prefix avoid the edge (a detour)', () => {
      const rows = [
        row('n1', 'p1', [A, T, U, O1], 90),
        row('n2', 'p1', [B, T, U, O1], 90),
        row('n3', 'p1', [C, T, U, O1], 90),
        row('n4', 'p1', [D, X1, O1], 80),
        row('n1', 'p2', [A, T, U, O2], 90),
        row('n2', 'p3', [B, T, U, O3], 90),
        row('n3', 'p4', [C, T, U, O4], 90),
      ];
      const out = locate(rows);
      expect(out.get('p2')).to.deep.include({ zone: 'path', culprit_edge: [T, U] });
      for (const l of out.values()) expect(l?.confidence ?? 0).to.be.below(0.8);
      expect(out.get('p1')).to.deep.include({ zone: 'path', culprit_edge: [T, U] });
      expect(out.get('p1')!.confidence).to.be.at.most(0.7);
    });

    it('takes an edge crossed by fewer flapping rows than another edge of the same prefixes for a detour: null', () => {
      // p2..p4 cross T-U from four directions; p1's only direction and one of p5's show a detour over X1-U.
      const rows = [
        row('n1', 'p1', [X1, U, O1], 60),
        row('n4', 'p5', [X1, U, O4], 60),
        row('n1', 'p5', [A, T, U, O4], 60),
        row('n1', 'p2', [A, T, U, O2], 60),
        row('n2', 'p2', [B, T, U, O2], 60),
        row('n2', 'p3', [B, T, U, O3], 60),
        row('n3', 'p3', [C, T, U, O3], 60),
        row('n3', 'p4', [C, T, U, O4], 60),
      ];
      const out = locate(rows);
      expect(out.get('p2')).to.deep.include({ zone: 'path', culprit_edge: [T, U] });
      expect(out.get('p1')).to.equal(null);
    });
  });

  describe('near against path and origin', () => {
    it('does not take the peer for the culprit when the link behind it flaps as strongly from elsewhere for other origins', () => {
      const rows = [
        row('n1', 'p1', [A, T, O1], 40),
        row('n2', 'p2', [B, A, T, O2], 40),
        row('n3', 'p3', [C, A, T, O3], 40),
        row('n3', 'p4', [C, A, T, O4], 40),
      ];
      const l = locate(rows, sessions({ n1: { [A]: 0 } })).get('p1');
      expect(l?.zone).to.not.equal('near');
    });

    it('is less sure of an origin when prefixes of other origins flap as strongly over the same links', () => {
      const alone = locate([row('n1', 'p', [A, T, O1], 50), row('n2', 'p', [B, U, O1], 50)]).get('p')!;
      const together = locate([row('n1', 'p', [A, T, O1], 50), row('n2', 'p', [B, U, O1], 50), row('n1', 'q', [A, T, O2], 50)]).get('p')!;
      expect(alone).to.deep.include({ zone: 'origin', culprit_asn: O1 });
      expect(together).to.deep.include({ zone: 'origin', culprit_asn: O1 });
      expect(together.confidence).to.be.below(alone.confidence);
      expect(together.confidence).to.be.below(0.8);
    });
  });

  describe('moas and the hard rules', () => {
    it('is moas exactly when the row is MOAS, with signals.origins equal to the row origins', () => {
      const rows = [row('n1', '172.20.1.0/24', [A, O1], 50), row('n2', '172.20.1.0/24', [B, O2], 40), row('n1', '172.20.2.0/24', [A, O1], 30)];
      const names = new Map([
        [O1, 'ORIGIN-1'],
        [O2, 'ORIGIN-2'],
      ]);
      const out = localizePrefixes(rows, sessions({ n1: { [A]: 9 } }), names, NOW);
      const listed = prefixRows(rows, names, NOW, 0, 10, out);
      for (const r of listed) {
        const l = r.localization;
        if (l?.zone === 'moas') expect(r.moas && JSON.stringify(l.signals.origins) === JSON.stringify(r.origins)).to.equal(true);
        if (r.moas) expect(l?.zone).to.equal('moas');
      }
      const moas = listed.find((r) => r.prefix === '172.20.1.0/24')!;
      expect(moas.localization).to.deep.include({ zone: 'moas', culprit_asn: null, culprit_edge: null });
      expect(moas.localization!.signals.origins).to.deep.equal([
        { asn: O1, name: 'ORIGIN-1' },
        { asn: O2, name: 'ORIGIN-2' },
      ]);
      expect(listed.find((r) => r.prefix === '172.20.2.0/24')!.localization?.zone).to.equal('near');
    });

    it('gives null, never a partial object, below the localisation score and when nothing can be said', () => {
      const rows = [row('n1', 'weak', [A, O1], 2.9), row('n1', 'own', [], 50, { peer_asn: null, origin_asn: null })];
      const out = locate(rows);
      expect(out.get('weak')).to.equal(null);
      expect(out.get('own')).to.equal(null);
    });

    it('decays the scores to now before deciding (a flap long over is not localised)', () => {
      const old = new Date(NOW - 60 * 60_000).toISOString();
      const rows = [row('n1', 'p', [A, O1], 50, { captured_at: old }), row('n2', 'p', [B, O1], 50, { captured_at: old })];
      expect(locate(rows).get('p')).to.equal(null);
      expect(locate(rows.map((r) => ({ ...r, captured_at: AT }))).get('p')?.zone).to.equal('origin');
    });

    it('keeps every confidence in [0, 1], counts zones and fills names', () => {
      const rows = [row('n1', 'a', [A, O1], 500), row('n2', 'a', [B, O1], 500), row('n1', 'b', [A, O2], 50), row('n2', 'b', [B, O3], 50)];
      const out = locate(rows, sessions({ n1: { [A]: 50 } }));
      for (const l of out.values()) expect(l!.confidence).to.be.within(0, 1);
      expect(localizationSummary(out.values())).to.deep.equal({ near: 0, origin: 1, path: 0, moas: 1 });
      expect(withNames(out.get('a')!, new Map([[O1, 'ORIGIN-1']])).culprit_name).to.equal('ORIGIN-1');
    });
  });
});
