import { expect } from 'chai';
import { nodeStatusStream, type NodeStatusEvent } from '../../domain/telemetry/health.js';
import { TRANSITIONS_KEPT_PER_NODE } from '../../projections/session-flaps/projection.js';
import { createTestSystem, type TestSystem } from '../support/system.js';
import { tableRows } from '../support/tables.js';

describe('session-flaps projection (session_flaps, session_flap_transitions)', function () {
  this.timeout(60_000);
  let sys: TestSystem;

  before(async () => {
    sys = await createTestSystem();
  });
  after(async () => sys?.close());

  it(`keeps the newest ${TRANSITIONS_KEPT_PER_NODE} transitions per node and reproduces both tables on rebuild`, async () => {
    // A session flapping between established and idle, one event a minute, appended directly in batches.
    const events: NodeStatusEvent[] = [{ type: 'BgpSessionStateChanged', data: { node_id: 'p', session: 's', from: 'unknown', to: 'established' } }];
    const total = TRANSITIONS_KEPT_PER_NODE + 10;
    for (let i = 0; i < total; i++) {
      const from = i % 2 === 0 ? 'established' : 'idle';
      events.push({
        type: 'BgpSessionStateChanged',
        data: {
          node_id: 'p',
          session: 's',
          from,
          to: from === 'idle' ? 'established' : 'idle',
          captured_at: new Date(Date.UTC(2026, 10, 3) + i * 60_000).toISOString(),
        },
      });
    }
    for (let i = 0; i < events.length; i += 250) {
      const recordedAt = new Date(Date.UTC(2026, 10, 3) + i * 60_000).toISOString();
      await sys.store.append([{ streamId: nodeStatusStream('p'), expected: i === 0 ? 'no_stream' : i - 1, events: events.slice(i, i + 250) }], {
        actor: 'spec',
        recordedAt,
      });
    }
    const { rows } = await sys.pool.query(`SELECT count(*)::int AS n, min(captured_at) AS oldest FROM session_flap_transitions WHERE node_id = 'p'`);
    expect(rows[0].n).to.equal(TRANSITIONS_KEPT_PER_NODE);
    expect(new Date(rows[0].oldest).getTime()).to.equal(Date.UTC(2026, 10, 3) + 10 * 60_000);
    const flap = (await tableRows(sys.pool, 'session_flaps', 'session'))[0] as Record<string, unknown>;
    expect(flap).to.include({ transitions_total: total, flaps_total: total / 2 });

    const before = {
      flaps: await tableRows(sys.pool, 'session_flaps', 'session'),
      transitions: await sys.pool.query(`SELECT session, kind, from_state, to_state, captured_at FROM session_flap_transitions ORDER BY id`),
    };
    await sys.pool.query(`UPDATE session_flaps SET score = 0, flaps_total = 0`);
    await sys.projections.rebuild(['session-flaps']);
    expect(await tableRows(sys.pool, 'session_flaps', 'session')).to.deep.equal(before.flaps);
    expect((await sys.pool.query(`SELECT session, kind, from_state, to_state, captured_at FROM session_flap_transitions ORDER BY id`)).rows).to.deep.equal(
      before.transitions.rows,
    );
  });

  it("scores each flap from its captured_at when old transitions arrive in one append, bounded by the append's recordedAt", async () => {
    const t = (minutes: number) => new Date(Date.UTC(2026, 10, 4, 10, minutes));
    const change = (session: string, from: string, to: string, minutes?: number): NodeStatusEvent =>
      ({
        type: 'BgpSessionStateChanged',
        data: { node_id: 'q', session, from, to, ...(minutes === undefined ? {} : { captured_at: t(minutes).toISOString() }) },
      }) as NodeStatusEvent;
    // Everything the agent saw from minute 0 to 20, recorded at once at minute 60: `late` flaps at 5 and 15 (the one at 15
    // reported before the one at 5), `ahead` flaps at minute 90 by its clock, `bare` without a captured_at, `quiet` never.
    const events = [
      change('late', 'unknown', 'established', 0),
      change('ahead', 'unknown', 'established', 0),
      change('bare', 'unknown', 'established'),
      change('quiet', 'unknown', 'established', 0),
      change('late', 'established', 'idle', 15),
      change('late', 'idle', 'established', 20),
      change('late', 'established', 'idle', 5),
      change('ahead', 'established', 'idle', 90),
      change('bare', 'established', 'idle'),
    ];
    await sys.store.append([{ streamId: nodeStatusStream('q'), expected: 'no_stream', events }], { actor: 'spec', recordedAt: t(60).toISOString() });
    const { rows } = await sys.pool.query(`SELECT session, score, score_at, flaps_total FROM session_flaps WHERE node_id = 'q' ORDER BY session`);
    type Row = { session: string; score: number; score_at: Date | null; flaps_total: number };
    const bySession: Record<string, Row> = Object.fromEntries(rows.map((r: Row) => [r.session, r]));
    // Kept as of the latest flap (minute 15): 1 + 2^(-10/30), not 2 as of minute 60.
    expect(new Date(bySession.late.score_at!)).to.deep.equal(t(15));
    expect(bySession.late.score).to.be.closeTo(1 + Math.pow(2, -10 / 30), 1e-12);
    expect(bySession.late.flaps_total).to.equal(2);
    // A captured_at ahead of the recording, or none: counted from the recording time.
    expect(bySession.ahead).to.deep.include({ score: 1, flaps_total: 1 });
    expect(new Date(bySession.ahead.score_at!)).to.deep.equal(t(60));
    expect(new Date(bySession.bare.score_at!)).to.deep.equal(t(60));
    // Seen, never flapped: no score time (flap_score null in the views).
    expect(bySession.quiet).to.deep.include({ score: 0, score_at: null, flaps_total: 0 });

    const before = await tableRows(sys.pool, 'session_flaps', 'node_id, session');
    await sys.projections.rebuild(['session-flaps']);
    expect(await tableRows(sys.pool, 'session_flaps', 'node_id, session')).to.deep.equal(before);
  });
});
