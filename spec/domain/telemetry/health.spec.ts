import { expect } from 'chai';
import { decideHealth, decideSessions, deriveHealth, foldNodeStatus, type HealthInputs } from '../../../domain/telemetry/health.js';

const now = new Date('2026-11-01T12:00:00Z');
const ago = (s: number) => new Date(now.getTime() - s * 1000);
const inputs = (extra: Partial<HealthInputs> = {}): HealthInputs => ({
  snapshot_received_at: ago(10),
  bgp_total: 2,
  bgp_established: 2,
  containers_not_running: 0,
  last_apply_status: 'succeeded',
  last_report_status: 'in_sync',
  ...extra,
});

const T = '2026-01-01T00:05:00.000Z';

describe('node health', () => {
  it('derives unknown, stale, down, degraded and ok in that order of precedence', () => {
    expect(deriveHealth(inputs({ snapshot_received_at: null }), now).health).to.equal('unknown');
    expect(deriveHealth(inputs({ snapshot_received_at: ago(300) }), now).health).to.equal('ok');
    expect(deriveHealth(inputs({ snapshot_received_at: ago(301), bgp_established: 0 }), now).health).to.equal('stale');
    expect(deriveHealth(inputs({ bgp_established: 0, last_apply_status: 'failed' }), now).health).to.equal('down');
    expect(deriveHealth(inputs({ bgp_total: 0, bgp_established: 0 }), now).health).to.equal('ok');
    expect(deriveHealth(inputs({ containers_not_running: 1, last_apply_status: 'rolled_back', last_report_status: 'failed' }), now)).to.deep.equal({
      health: 'degraded',
      reasons: ['1 containers not running', 'last apply rolled_back', 'last reconciliation failed'],
    });
    expect(deriveHealth(inputs({ last_report_status: 'drift', last_apply_status: null }), now).health).to.equal('ok');
  });

  it('records a health change once and session changes per session', () => {
    const state = foldNodeStatus([]);
    const events = decideHealth('n1', state, { health: 'ok', reasons: [] });
    expect(events).to.have.length(1);
    expect(decideHealth('n1', foldNodeStatus(events), { health: 'ok', reasons: [] })).to.deep.equal([]);

    const seen = decideSessions(
      'n1',
      state,
      [
        { name: 'b', state: 'established' },
        { name: 'a', state: 'idle' },
      ],
      T,
    );
    expect(seen.map((e) => e.data)).to.deep.equal([
      { node_id: 'n1', session: 'a', from: 'unknown', to: 'idle', captured_at: T },
      { node_id: 'n1', session: 'b', from: 'unknown', to: 'established', captured_at: T },
    ]);
    const gone = decideSessions('n1', foldNodeStatus(seen), [{ name: 'a', state: 'idle' }], T);
    expect(gone.map((e) => e.data)).to.deep.equal([{ node_id: 'n1', session: 'b', from: 'established', to: 'absent', captured_at: T }]);
    expect(decideSessions('n1', foldNodeStatus([...seen, ...gone]), [{ name: 'a', state: 'idle' }], T)).to.deep.equal([]);
  });

  it('records a restart only for a session the recorded state and the snapshot both hold Established', () => {
    const state = foldNodeStatus(
      decideSessions(
        'n1',
        foldNodeStatus([]),
        [
          { name: 'a', state: 'established' },
          { name: 'b', state: 'idle' },
        ],
        T,
      ),
    );
    const restarts = [
      { session: 'a', since_before: '2026-01-01T00:00:00.000Z', since_after: '2026-01-01T00:04:00.000Z' },
      { session: 'b', since_before: '2026-01-01T00:00:00.000Z', since_after: '2026-01-01T00:04:00.000Z' },
    ];
    const events = decideSessions(
      'n1',
      state,
      [
        { name: 'a', state: 'established' },
        { name: 'b', state: 'established' },
      ],
      T,
      restarts,
    );
    expect(events.map((e) => e.type)).to.deep.equal(['BgpSessionStateChanged', 'BgpSessionRestarted']);
    expect(events[1].data).to.deep.equal({ node_id: 'n1', ...restarts[0], captured_at: T });
    expect(foldNodeStatus(events, state).sessions.get('a')).to.equal('established');
  });
});
