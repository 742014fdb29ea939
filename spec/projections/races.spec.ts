import { expect } from 'chai';
import type { Projection } from '../../projections/runtime/projection.js';
import { appendCounted, counterProjection } from '../fixtures/counter-projection/projection.js';
import { createTestSystem, type TestSystem } from '../support/system.js';
import { tableRows } from '../support/tables.js';
import { eventually } from '../support/wait.js';

const meta = { actor: 'races' };

/**
 * An inline projection with a parent and a child table. Like any such read model,
 * it lists its tables children first (the order a rebuild empties them in) and
 * writes the parent row before the child row (the order the foreign key needs).
 */
function parentChildProjection(gate: { before?: () => Promise<void> }): Projection {
  return {
    name: 'race_parent_child',
    mode: 'inline',
    handles: ['Made'],
    tables: ['race_child', 'race_parent'],
    async apply(tx, event) {
      await tx.query('INSERT INTO race_parent (id, stream_id) VALUES ($1, $2)', [event.position.pos.toString(), event.streamId]);
      await gate.before?.();
      await tx.query('INSERT INTO race_child (parent_id, version) VALUES ($1, $2)', [event.position.pos.toString(), event.version]);
    },
  };
}

describe('Projection runtime races', function () {
  this.timeout(20_000);
  let system: TestSystem | undefined;
  afterEach(async () => {
    await system?.close();
    system = undefined;
  });

  it('stops the runner promptly when stop() comes while a batch is running', async () => {
    // Race: stop() woke the loops that were idle, but a loop busy with a batch went
    // to sleep for a whole poll interval afterwards before it saw the stop.
    let stopping: Promise<void> | undefined;
    // eslint-disable-next-line prefer-const -- assigned once the system exists; the hook above reads it later
    let runtime: TestSystem['projections'] | undefined;
    let stopAsked = 0;
    const s = (system = await createTestSystem({
      projections: [counterProjection({ beforeApply: () => void (stopping ??= ((stopAsked = Date.now()), runtime!.stop())) })],
      pollIntervalMs: 5000,
    }));
    runtime = s.projections;
    await appendCounted(s.store, 3);
    runtime.start();
    await eventually(() => stopping !== undefined, { what: 'a batch to start', timeoutMs: 10_000 });
    await stopping;
    expect(Date.now() - stopAsked, 'ms stop() took').to.be.below(1000);
  });

  it('rebuilds an inline parent/child projection while an append is between its parent and child rows', async () => {
    // Race: the rebuild locks the child table, then waits for the parent table,
    // which the append holds; the append then waits for the child table: a
    // deadlock. PostgreSQL aborts the rebuild (40P01), and the rebuild failed.
    const gate: { before?: () => Promise<void> } = {};
    const s = (system = await createTestSystem({ projections: [parentChildProjection(gate)] }));
    await s.pool.query(`CREATE TABLE race_parent (id bigint PRIMARY KEY, stream_id text NOT NULL)`);
    await s.pool.query(`CREATE TABLE race_child (parent_id bigint NOT NULL REFERENCES race_parent (id), version int NOT NULL)`);
    for (let i = 0; i < 5; i++) await s.store.append([{ streamId: `pc-${i}`, expected: 'no_stream', events: [{ type: 'Made', data: {} }] }], meta);

    let reached = false;
    let open!: () => void;
    const opened = new Promise<void>((res) => (open = res));
    gate.before = async () => {
      gate.before = undefined;
      reached = true;
      await opened;
    };
    const append = s.store.append([{ streamId: 'pc-live', expected: 'no_stream', events: [{ type: 'Made', data: {} }] }], meta);
    await eventually(() => reached, { what: 'the append to hold its parent row', timeoutMs: 10_000 });
    const rebuild = s.projections.rebuild(['race_parent_child']).then(
      (r) => ({ ok: r[0].events }),
      (e: Error & { code?: string }) => ({ failed: `${e.code} ${e.message}` }),
    );
    await eventually(
      async () => {
        const { rows } = await s.pool.query(`SELECT 1 FROM pg_locks WHERE relation = 'race_parent'::regclass AND NOT granted AND mode = 'ExclusiveLock'`);
        return rows.length > 0;
      },
      { what: 'the rebuild to wait for the parent table', timeoutMs: 10_000 },
    );
    open();
    await append;
    const outcome = await rebuild;
    expect(outcome).to.have.property('ok');

    const rebuilt = { parents: await tableRows(s.pool, 'race_parent', 'id'), children: await tableRows(s.pool, 'race_child', 'parent_id') };
    expect(rebuilt.parents).to.have.length(6);
    await s.projections.rebuild(['race_parent_child']);
    expect({ parents: await tableRows(s.pool, 'race_parent', 'id'), children: await tableRows(s.pool, 'race_child', 'parent_id') }).to.deep.equal(rebuilt);
  });
});
