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
});
