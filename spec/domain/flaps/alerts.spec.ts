import { expect } from 'chai';
import { decideAlerts, evolveOpenAlerts, type AlertKey, type FlapAlertEvent, type OpenAlerts, type ScoreReading } from '../../../domain/flaps/alerts.js';
import { flapCounts, prefixReadings, sessionReadings } from '../../../domain/flaps/readings.js';
import type { NodePrefixFlap } from '../../../domain/flaps/prefix-rows.js';

const NOW = new Date('2026-11-01T12:00:00Z');
const SESSION: AlertKey = { kind: 'session', node_id: 'n1', session: 'ebgp_a' };
const PREFIX: AlertKey = { kind: 'prefix', prefix: '172.21.0.0/24', peer_asn: 4242420002 };
const reading = (key: AlertKey, score: number, nodes = ['n1']): ScoreReading => ({ key, score, nodes });

/** Given the events so far, the open alerts (ids from the stream versions). */
function given(events: FlapAlertEvent[]): OpenAlerts {
  return events.reduce<OpenAlerts>((state, e, version) => evolveOpenAlerts(state, e, version), new Map());
}

describe('Flap alert decisions (hysteresis between the alert and the close line)', () => {
  it('opens at the alert line and not below it: session 3, prefix 100', () => {
    expect(decideAlerts(new Map(), [reading(SESSION, 2.999), reading(PREFIX, 99.99)], NOW)).to.deep.equal([]);
    expect(decideAlerts(new Map(), [reading(SESSION, 3), reading(PREFIX, 100, ['n2', 'n1'])], NOW)).to.deep.equal([
      { type: 'FlapAlertOpened', data: { key: PREFIX, nodes: ['n2', 'n1'], score: 100, at: NOW.toISOString() } },
      { type: 'FlapAlertOpened', data: { key: SESSION, nodes: ['n1'], score: 3, at: NOW.toISOString(), remote_asn: null } },
    ]);
  });

  it('opens no second alert for a key already open, however high the score', () => {
    const open = given(decideAlerts(new Map(), [reading(SESSION, 4)], NOW));
    expect(decideAlerts(open, [reading(SESSION, 40)], NOW)).to.deep.equal([]);
  });

  it('keeps an open alert between the lines and resolves it below the close line (1.5, 50) with its peak', () => {
    const open = given(decideAlerts(new Map(), [reading(SESSION, 4), reading(PREFIX, 120)], NOW));
    expect(decideAlerts(open, [reading(SESSION, 1.5), reading(PREFIX, 50)], NOW)).to.deep.equal([]);
    const later = new Date(NOW.getTime() + 3_600_000);
    const events = decideAlerts(open, [reading(SESSION, 1.49, ['n1']), reading(PREFIX, 49.9, ['n3'])], later);
    expect(events).to.deep.equal([
      {
        type: 'FlapAlertResolved',
        data: {
          alert_id: 1,
          key: PREFIX,
          nodes: ['n1', 'n3'],
          peak_score: 120,
          last_score: 49.9,
          at: later.toISOString(),
          resolution: 'below_close_line',
        },
      },
      {
        type: 'FlapAlertResolved',
        data: { alert_id: 2, key: SESSION, nodes: ['n1'], peak_score: 4, last_score: 1.49, at: later.toISOString(), resolution: 'below_close_line' },
      },
    ]);
  });

  it('does not reopen a resolved alert between the lines; reopens once the score crosses the alert line again', () => {
    const opened = decideAlerts(new Map(), [reading(SESSION, 3.5)], NOW);
    const resolved = decideAlerts(given(opened), [reading(SESSION, 1)], NOW);
    const state = given([...opened, ...resolved]);
    expect(state.size).to.equal(0);
    expect(decideAlerts(state, [reading(SESSION, 2.9)], NOW)).to.deep.equal([]);
    const again = decideAlerts(state, [reading(SESSION, 3.1)], NOW);
    expect(again.map((e) => e.type)).to.deep.equal(['FlapAlertOpened']);
    expect([...given([...opened, ...resolved, ...again]).values()][0].alert_id).to.equal(3);
  });

  it('resolves an alert whose score is gone (node decommissioned or deleted) with its last known score', () => {
    const open = given(decideAlerts(new Map(), [reading(SESSION, 5)], NOW));
    const [event] = decideAlerts(open, [], NOW);
    expect(event).to.deep.include({ type: 'FlapAlertResolved' });
    expect(event.data).to.deep.include({ last_score: 5, peak_score: 5, resolution: 'source_gone' });
  });
});

describe('Flap readings of the fleet', () => {
  const row = (node_id: string, score: number, capturedAgoS = 0, prefix = '172.21.0.0/24'): NodePrefixFlap => ({
    node_id,
    prefix,
    peer_asn: 4242420002,
    origin_asn: 4242420077,
    score,
    flaps: null,
    last_flap_at: null,
    captured_at: new Date(NOW.getTime() - capturedAgoS * 1000).toISOString(),
    as_path: null,
    changes: null,
    interval_s: null,
    alert_since: null,
  });

  it('scores a prefix direction by the highest node score decayed to now (half-life 10 min), nodes at the list line or the top', () => {
    const [r] = prefixReadings([row('n1', 200, 600), row('n2', 90), row('n3', 10)], NOW);
    expect(r.score).to.be.closeTo(100, 1e-9);
    expect(r.nodes).to.deep.equal(['n1', 'n2']);
  });

  it('decays session scores (half-life 30 min); never flapped is 0', () => {
    const readings = sessionReadings(
      [
        { node_id: 'n1', session: 'a', score: 6, score_at: new Date(NOW.getTime() - 1_800_000) },
        { node_id: 'n1', session: 'b', score: 0, score_at: null },
      ],
      NOW,
    );
    expect(readings.map((r) => r.score)).to.deep.equal([3, 0]);
    expect(flapCounts(readings, prefixReadings([row('n1', 25), row('n2', 5, 0, '172.21.1.0/24')], NOW))).to.deep.equal({
      tracked_prefixes: 2,
      flapping_prefixes: 1,
      flapping_sessions: 1,
    });
  });
});
