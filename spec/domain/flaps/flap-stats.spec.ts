import { expect } from 'chai';
import { gridOf, reportChanges, seriesOf, trimmedRate } from '../../../domain/flaps/flap-stats.js';

describe('Flap stats rules', () => {
  it('the gauge drops the top 10 % of 15 buckets (one), counts missing ones 0 and averages the rest per second', () => {
    // 15 buckets: the highest (600) is dropped; two missing count 0.
    const changes = [600, 60, 120, null, 30, 30, 30, 30, 30, 30, 30, 30, 30, null, 90];
    const kept = 60 + 120 + 0 + 30 * 9 + 0 + 90; // 540 over 14 buckets
    expect(kept).to.equal(540);
    expect(trimmedRate(changes)).to.be.closeTo(kept / 14 / 60, 1e-12);
    expect(trimmedRate(Array(15).fill(null))).to.equal(0);
  });

  it('the grid holds only complete buckets aligned to the epoch', () => {
    const g = gridOf(14_400, 180, new Date('2026-11-01T13:59:59Z'));
    expect(g.to).to.equal(Date.parse('2026-11-01T12:00:00Z') / 1000);
    expect(g.starts).to.have.length(180);
    expect(g.starts.at(-1)).to.equal(g.to - 14_400);
  });

  it('a bucket without a row is a gap (null); with a row its rate is changes / bucket_s', () => {
    const stored = [{ t: 60, changes: 0, listed_changes: 0, tracked_prefixes: null, flapping_prefixes: null, flapping_sessions: null, open_alerts: null }];
    const [gap, quiet] = seriesOf([0, 60], 60, stored);
    expect(gap).to.deep.include({ t: 0, changes: null, rate_per_s: null });
    expect(quiet).to.deep.include({ t: 60, changes: 0, rate_per_s: 0 });
  });

  it('an older agent without total_changes counts its listed changes; listed never exceed the total', () => {
    expect(reportChanges(null, [3, null, 4])).to.deep.equal([7, 7]);
    expect(reportChanges(100, [3, null, 4])).to.deep.equal([100, 7]);
    expect(reportChanges(5, [3, 4])).to.deep.equal([5, 5]);
  });
});
