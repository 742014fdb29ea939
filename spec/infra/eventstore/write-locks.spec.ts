import { expect } from 'chai';
import { execute, handleCommand } from '../../../commands/handle.js';
import { createPool } from '../../../infra/db/pool.js';
import { PgEventStore } from '../../../infra/eventstore/postgres/store.js';
import { KeyedLocks } from '../../../infra/eventstore/postgres/write-locks.js';
import { WrongExpectedVersion } from '../../../infra/eventstore/types.js';
import { createLogger } from '../../../infra/logger.js';
import { counter } from '../../fixtures/counter.js';
import { createTestSystem, type TestSystem } from '../../support/system.js';

const meta = { actor: 'spec' };

describe('writer locks: in process', () => {
  it('lets exclusive holders of one name take turns in arrival order', async () => {
    const locks = new KeyedLocks();
    const order: string[] = [];
    await locks.acquire([{ name: 'a' }]);
    const second = locks.acquire([{ name: 'a' }]).then(() => order.push('second'));
    const third = locks.acquire([{ name: 'a' }]).then(() => order.push('third'));
    expect(locks.tryAcquire([{ name: 'a' }])).to.equal(false);
    order.push('first done');
    locks.release([{ name: 'a' }]);
    await second;
    locks.release([{ name: 'a' }]);
    await third;
    expect(order).to.deep.equal(['first done', 'second', 'third']);
  });

  it('lets shared holders in together, but not past an exclusive request queued before them', async () => {
    const locks = new KeyedLocks();
    await locks.acquire([{ name: 'f', shared: true }]);
    await locks.acquire([{ name: 'f', shared: true }]);
    const order: string[] = [];
    const exclusive = locks.acquire([{ name: 'f' }]).then(() => order.push('exclusive'));
    const lateShared = locks.acquire([{ name: 'f', shared: true }]).then(() => order.push('late shared'));
    expect(locks.tryAcquire([{ name: 'f', shared: true }])).to.equal(false);
    locks.release([{ name: 'f', shared: true }]);
    locks.release([{ name: 'f', shared: true }]);
    await exclusive;
    locks.release([{ name: 'f' }]);
    await lateShared;
    expect(order).to.deep.equal(['exclusive', 'late shared']);
  });

  it('takes nothing on a failed try', () => {
    const locks = new KeyedLocks();
    expect(locks.tryAcquire([{ name: 'x' }])).to.equal(true);
    expect(locks.tryAcquire([{ name: 'w' }, { name: 'x' }])).to.equal(false);
    expect(locks.tryAcquire([{ name: 'w' }])).to.equal(true);
  });
});

describe('writer locks: PostgreSQL', () => {
  let sys: TestSystem;
  before(async () => {
    sys = await createTestSystem();
  });
  after(async () => sys.close());

  it('serialises writers of one stream from two stores on one database (two instances): no retry needed', async () => {
    const otherPool = createPool(sys.db.url, 4);
    const other = new PgEventStore({ pool: otherPool, log: createLogger('silent') });
    try {
      await handleCommand(sys.store, 'counter-two', counter, { type: 'Open', name: 'two', metadata: { now: sys.clock.now() } }, meta);
      // One attempt each: a writer that did not wait for the one before it would fail with 409.
      await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          handleCommand(i % 2 ? other : sys.store, 'counter-two', counter, { type: 'Increment', by: 1 }, meta, { attempts: 1 }),
        ),
      );
      const values = (await sys.store.readStream('counter-two')).slice(1).map((e) => (e.data as { value: number }).value);
      expect(values).to.deep.equal(Array.from({ length: 40 }, (_, i) => i + 1));
    } finally {
      await otherPool.end();
    }
  });

  it('locks a stream found only while deciding before appending to it, starting over when it is busy', async () => {
    await handleCommand(sys.store, 'counter-side', counter, { type: 'Open', name: 'side', metadata: { now: sys.clock.now() } }, meta);
    // Each writer locks its own primary stream and appends to the shared side stream found while deciding.
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        execute(
          sys.store,
          [`primary-${i}`],
          async (_streams, more) => {
            const side = await more('counter-side');
            return {
              writes: [{ streamId: 'counter-side', events: [{ type: 'CounterIncremented', data: { by: 1, value: side.version + 1 } }] }],
              result: side.version,
            };
          },
          meta,
          { attempts: 3 },
        ),
      ),
    );
    const values = (await sys.store.readStream('counter-side')).slice(1).map((e) => (e.data as { value: number }).value);
    expect(values).to.deep.equal(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(results.map((r) => r.result).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 20 }, (_, i) => i));
  });

  it('refuses a stale exact version inside a write session with the typed conflict, and the session’s other writes roll back with it', async () => {
    await sys.store.append([{ streamId: 'session-stale', expected: 'no_stream', events: [{ type: 'Tick', data: {} }] }], meta);
    await sys.store.append([{ streamId: 'session-stale', expected: 0, events: [{ type: 'Tick', data: {} }] }], meta);
    const failed = await sys.store
      .withWriteLocks([{ name: 'session-stale' }], async (session) => {
        await session.append([{ streamId: 'session-other', expected: 'no_stream', events: [{ type: 'Tick', data: {} }] }], meta);
        return session.append([{ streamId: 'session-stale', expected: 0, events: [{ type: 'Tick', data: {} }] }], meta);
      })
      .catch((e: unknown) => e);
    expect(failed).to.be.instanceOf(WrongExpectedVersion);
    expect(failed).to.include({ expected: 0, actual: 1 });
    expect(await sys.store.streamVersion('session-other')).to.equal(-1);
    expect(await sys.store.streamVersion('session-stale')).to.equal(1);
  });

  it('reads the answer in the append’s transaction, before any later writer commits', async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        execute(
          sys.store,
          ['answered'],
          (streams) => ({ writes: [{ streamId: 'answered', events: [{ type: 'Tick', data: {} }] }], result: streams.answered.version + 1 }),
          meta,
          { answer: async (tx) => (await tx.query(`SELECT version FROM streams WHERE stream_id = 'answered'`)).rows[0].version as number },
        ),
      ),
    );
    for (const a of answers) expect(a.answered!.value).to.equal(a.result);
    expect(answers.map((a) => a.result).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 10 }, (_, i) => i));
  });
});
