import { expect } from 'chai';
import { alertSince, changesSincePrevious, nextPrefixRows, prefixKeyOf, reportInterval, uniqueEntries } from '../../../domain/flaps/prefix-report.js';

const entry = (over: Record<string, unknown> = {}) =>
  ({ prefix: '172.20.0.0/24', peer_asn: 4242420001, origin_asn: 4242420002, score: 10, flaps: 5, last_flap_at: null, ...over }) as Parameters<
    typeof changesSincePrevious
  >[0];

describe('Prefix flap report rules', () => {
  it('counts announcements plus withdrawals when the agent sent them, even without a previous row', () => {
    expect(changesSincePrevious(entry({ announcements: 3, withdrawals: null }), undefined, true)).to.equal(3);
    expect(changesSincePrevious(entry({ announcements: 2, withdrawals: 4 }), undefined, true)).to.equal(6);
  });

  it('falls back to the growth of the cumulative flaps, and answers null (never 0) when it cannot tell', () => {
    const previous = { flaps: 3, score: 1, alert_since: null };
    expect(changesSincePrevious(entry({ flaps: 7 }), previous, true)).to.equal(4);
    expect(changesSincePrevious(entry({ flaps: 2 }), previous, true)).to.equal(null); // a counter that went down
    expect(changesSincePrevious(entry({ flaps: 7 }), undefined, true)).to.equal(null); // key not in the previous report
    expect(changesSincePrevious(entry({ flaps: 7, announcements: 1 }), previous, false)).to.equal(null); // no baseline
  });

  it('keeps the alert start while the key stays at alert strength and starts it when it just got there', () => {
    const at = new Date('2026-11-01T12:00:00Z');
    const since = new Date('2026-11-01T11:50:00Z');
    expect(alertSince(entry({ score: 99.9 }), { flaps: 1, score: 150, alert_since: since }, at)).to.equal(null);
    expect(alertSince(entry({ score: 100 }), { flaps: 1, score: 150, alert_since: since }, at)).to.equal(since);
    expect(alertSince(entry({ score: 120 }), undefined, at)).to.equal(at);
  });

  it('has an interval only when the report is later than the previous one', () => {
    const t = new Date('2026-11-01T12:00:00Z');
    expect(reportInterval(null, t)).to.equal(null);
    expect(reportInterval(new Date(t.getTime() - 60_000), t)).to.equal(60);
    expect(reportInterval(t, t)).to.equal(null);
    expect(reportInterval(new Date(t.getTime() + 1000), t)).to.equal(null);
  });

  it('keeps each key once with its higher score, and derives the rows from the previous report', () => {
    const twice = [entry({ score: 3 }), entry({ score: 8 }), entry({ peer_asn: null, score: 1 })];
    expect(uniqueEntries(twice).map((e) => e.score)).to.deep.equal([8, 1]);
    const previous = new Map([[prefixKeyOf('172.20.0.0/24', 4242420001), { flaps: 2, score: 120, alert_since: new Date('2026-11-01T11:00:00Z') }]]);
    const { rows, interval_s } = nextPrefixRows(
      { captured_at: '2026-11-01T12:00:00Z', entries: [entry({ score: 130, flaps: 5 })] },
      previous,
      new Date('2026-11-01T11:59:00Z'),
    );
    expect(interval_s).to.equal(60);
    expect(rows).to.have.length(1);
    expect(rows[0].changes).to.equal(3);
    expect(rows[0].alert_since?.toISOString()).to.equal('2026-11-01T11:00:00.000Z');
  });
});
