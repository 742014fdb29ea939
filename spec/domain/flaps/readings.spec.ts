import { expect } from 'chai';
import { sessionReadings, sessionScoreAt } from '../../../domain/flaps/readings.js';

const T0 = new Date('2026-11-03T10:00:00Z');
const plus = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);

describe('domain/flaps/readings', () => {
  it('answers null without a flap record and for a session seen that never flapped, a number once it flapped', () => {
    expect(sessionScoreAt(undefined, T0)).to.equal(null);
    expect(sessionScoreAt({ score: 0, score_at: null }, T0)).to.equal(null);
    expect(sessionScoreAt({ score: 2, score_at: T0 }, plus(30))).to.be.closeTo(1, 1e-12);
    // Decayed below the flap data floor (0.01): exactly 0.0, still a number.
    expect(sessionScoreAt({ score: 1, score_at: T0 }, plus(190)))
      .to.be.closeTo(Math.pow(2, -190 / 30), 1e-12)
      .and.above(0.01);
    expect(sessionScoreAt({ score: 1, score_at: T0 }, plus(300))).to.equal(0);
  });

  it('reads a session that never flapped as 0 for the alerts, so it opens nothing', () => {
    const [r] = sessionReadings([{ node_id: 'n1', session: 's', score: 0, score_at: null }], T0);
    expect(r).to.deep.include({ score: 0, nodes: ['n1'] });
  });
});
