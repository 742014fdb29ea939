import { expect } from 'chai';
import {
  addFlap,
  compareIssues,
  decayScore,
  detectRestarts,
  flapTime,
  isFlap,
  issueClass,
  SESSION_FLAP,
  sessionHealth,
  sessionKind,
  type IssueKey,
} from '../../../domain/flaps/session.js';

const T0 = new Date('2026-11-03T10:00:00Z');
const plus = (s: number) => new Date(T0.getTime() + s * 1000);

describe('domain/flaps/session', () => {
  it('halves a score every 30 minutes and never grows it for an earlier now', () => {
    expect(decayScore(4, T0, plus(1800), SESSION_FLAP.halfLifeSeconds)).to.be.closeTo(2, 1e-12);
    expect(decayScore(4, T0, plus(5400), SESSION_FLAP.halfLifeSeconds)).to.be.closeTo(0.5, 1e-12);
    expect(decayScore(4, T0, plus(-60), SESSION_FLAP.halfLifeSeconds)).to.equal(4);
  });

  it('adds 1 per flap onto the score decayed to the flap', () => {
    expect(addFlap({ score: 0, at: null }, T0, 1800)).to.deep.equal({ score: 1, at: T0 });
    const next = addFlap({ score: 1, at: T0 }, plus(1800), 1800);
    expect(next.score).to.be.closeTo(1.5, 1e-12);
    expect(next.at).to.deep.equal(plus(1800));
  });

  it('scores flaps by their own times whatever order they arrive in (a late one adds its decayed weight)', () => {
    const read = (s: { score: number; at: Date | null }, now: Date) => decayScore(s.score, s.at!, now, 1800);
    const inOrder = addFlap(addFlap({ score: 0, at: null }, T0, 1800), plus(1800), 1800);
    const late = addFlap(addFlap({ score: 0, at: null }, plus(1800), 1800), T0, 1800);
    expect(late.at).to.deep.equal(plus(1800));
    for (const now of [plus(1800), plus(7200)]) expect(read(late, now)).to.be.closeTo(read(inOrder, now), 1e-12);
    // 1 + 2^(-1) at the later flap, not 2 as if the late one had just happened.
    expect(late.score).to.be.closeTo(1.5, 1e-12);
  });

  it("counts a flap from its transition's captured_at, never after the report reached the server", () => {
    const received = plus(600);
    expect(flapTime(T0.toISOString(), received)).to.deep.equal(T0);
    // An agent clock ahead of the server (within the skew or beyond it) counts from the arrival: no inflated score.
    expect(flapTime(plus(660).toISOString(), received)).to.deep.equal(received);
    expect(flapTime(plus(86_400).toISOString(), received)).to.deep.equal(received);
    expect(flapTime(undefined, received)).to.deep.equal(received);
    expect(flapTime('not a time', received)).to.deep.equal(received);
    expect(flapTime('2026-11-03T09:59:60Z', received)).to.deep.equal(T0);
  });

  it('counts leaving Established and restarts as flaps, nothing else', () => {
    expect(isFlap('state', 'established', 'idle')).to.equal(true);
    expect(isFlap('state', 'established', 'active')).to.equal(true);
    expect(isFlap('state', 'idle', 'connect')).to.equal(false);
    expect(isFlap('state', 'active', 'established')).to.equal(false);
    expect(isFlap('restart', 'established', 'established')).to.equal(true);
  });

  it('detects a restart only when both snapshots are Established with known, different since', () => {
    const since = (s: string | null) => ({ name: 'a', state: 'established' as const, since: s });
    expect(detectRestarts([since('2026-11-03T09:00:00Z')], [since('2026-11-03T09:00:00.000Z')])).to.deep.equal([]);
    expect(detectRestarts([since('2026-11-03T09:00:00Z')], [since('2026-11-03T09:30:00Z')])).to.deep.equal([
      { session: 'a', since_before: '2026-11-03T09:00:00Z', since_after: '2026-11-03T09:30:00Z' },
    ]);
    expect(detectRestarts([since(null)], [since('2026-11-03T09:30:00Z')])).to.deep.equal([]);
    expect(detectRestarts([{ name: 'a', state: 'idle', since: '2026-11-03T09:00:00Z' }], [since('2026-11-03T09:30:00Z')])).to.deep.equal([]);
    expect(detectRestarts([], [since('2026-11-03T09:30:00Z')])).to.deep.equal([]);
  });

  it('maps states to session health and names to kinds', () => {
    expect(sessionHealth('established')).to.equal('up');
    for (const s of ['connect', 'active', 'opensent', 'openconfirm'] as const) expect(sessionHealth(s)).to.equal('connecting');
    for (const s of ['idle', 'down'] as const) expect(sessionHealth(s)).to.equal('down');
    expect(sessionHealth(null)).to.equal('unknown');
    expect(sessionKind('ibgp_n2_v4')).to.equal('ibgp');
    expect(sessionKind("'ibgp_n-2_v6'")).to.equal('ibgp');
    expect(sessionKind('ebgp_as4242420002')).to.equal('ebgp');
    expect(sessionKind('peer_x')).to.equal('ebgp');
  });

  it('classes and sorts issues: flapping, down, connecting; eBGP first; flapping by score', () => {
    expect(issueClass('up', false)).to.equal(null);
    expect(issueClass('up', true)).to.equal('flapping');
    expect(issueClass('unknown', false)).to.equal('down');
    const key = (k: Partial<IssueKey>): IssueKey => ({ class: 'down', kind: 'ebgp', flap_score: 0, node_id: 'n1', name: 'a', ...k });
    const rows = [
      key({ class: 'connecting', name: 'c1' }),
      key({ class: 'down', kind: 'ibgp', name: 'd-i' }),
      key({ class: 'down', name: 'd-e' }),
      key({ class: 'flapping', flap_score: 3.5, name: 'f-low' }),
      key({ class: 'flapping', kind: 'ibgp', flap_score: 9, name: 'f-ibgp' }),
      key({ class: 'flapping', flap_score: 7, name: 'f-high' }),
    ];
    expect(rows.sort(compareIssues).map((r) => r.name)).to.deep.equal(['f-high', 'f-low', 'f-ibgp', 'd-e', 'd-i', 'c1']);
  });
});
