import { expect } from 'chai';
import type pg from 'pg';
import { createPool } from '../../infra/db/pool.js';
import { runExclusive, scheduleSingleton } from '../../infra/db/singleton.js';
import { createLogger } from '../../infra/logger.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/wait.js';

const log = createLogger('silent');
// Timed pauses, each with its reason where it is used.
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

/** A promise the test opens when it wants. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((res) => (open = res));
  return { promise, open };
}

describe('Singleton jobs under an advisory lock', function () {
  this.timeout(30_000);

  let db: TestDatabase;
  let a: pg.Pool;
  let b: pg.Pool;

  before(async () => {
    db = await createTestDatabase();
    // Two pools stand for two instances of the service on one database.
    a = createPool(db.url, 4);
    b = createPool(db.url, 4);
  });

  after(async () => {
    await a?.end();
    await b?.end();
    await db?.drop();
  });

  afterEach(async () => {
    const { rows } = await a.query(
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    expect(rows[0].n, 'advisory locks left behind').to.equal(0);
  });

  describe('runExclusive', () => {
    it('runs one of two concurrent callers of the same job; the other skips while it is held', async () => {
      const held = gate();
      let firstRunning = false;
      const first = runExclusive(a, 'same', async () => {
        firstRunning = true;
        await held.promise;
      });
      await eventually(() => firstRunning, { what: 'the first caller to run', timeoutMs: 10_000 });
      let secondRan = false;
      // Same pool and another pool: neither gets in while the first holds the job.
      expect(await runExclusive(a, 'same', async () => void (secondRan = true))).to.equal(false);
      expect(await runExclusive(b, 'same', async () => void (secondRan = true))).to.equal(false);
      expect(secondRan).to.equal(false);
      held.open();
      expect(await first).to.equal(true);
      // Released: the next caller runs.
      expect(await runExclusive(b, 'same', async () => void (secondRan = true))).to.equal(true);
      expect(secondRan).to.equal(true);
    });

    it('runs jobs of different names at the same time', async () => {
      const held = gate();
      let inside = 0;
      let together = false;
      const work = async () => {
        inside += 1;
        if (inside === 2) {
          together = true;
          held.open();
        }
        await held.promise;
        inside -= 1;
      };
      const results = await Promise.all([runExclusive(a, 'job-one', work), runExclusive(b, 'job-two', work)]);
      expect(results).to.deep.equal([true, true]);
      expect(together).to.equal(true);
    });

    it('releases the job when its work throws', async () => {
      const failing = runExclusive(a, 'throws', async () => {
        throw new Error('work failed');
      });
      let error: unknown;
      await failing.catch((err) => (error = err));
      expect((error as Error)?.message).to.equal('work failed');
      expect(await runExclusive(b, 'throws', async () => {})).to.equal(true);
    });

    it('survives its lock connection being killed during the work, and the job becomes free', async () => {
      const killed = gate();
      const result = runExclusive(a, 'killed', async () => {
        const advisory = `FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`;
        await b.query(`SELECT pg_terminate_backend(pid) ${advisory}`);
        await eventually(async () => (await b.query(`SELECT 1 ${advisory}`)).rowCount === 0, { what: 'the lock session gone' });
        killed.open();
      });
      // The lock died with its session; the caller learns that its unlock failed.
      let error: unknown;
      await result.then(
        () => undefined,
        (err) => (error = err),
      );
      await killed.promise;
      expect(error, 'runExclusive with a lost lock').to.be.instanceOf(Error);
      expect(await runExclusive(b, 'killed', async () => {})).to.equal(true);
      // The broken connection did not go back to the pool for the next job.
      expect(await runExclusive(a, 'killed', async () => {})).to.equal(true);
    });
  });

  describe('scheduleSingleton', () => {
    it('never runs the same job on two instances at once, and stops cleanly', async () => {
      let inside = 0;
      let most = 0;
      const ran = { a: 0, b: 0 };
      const work = (instance: 'a' | 'b') => async () => {
        inside += 1;
        most = Math.max(most, inside);
        ran[instance] += 1;
        await sleep(15); // the work takes a while, so that two runs at once would overlap
        inside -= 1;
      };
      const jobA = scheduleSingleton(a, 'tick', 1, work('a'), log);
      const jobB = scheduleSingleton(b, 'tick', 1, work('b'), log);
      try {
        await eventually(() => ran.a + ran.b >= 30, { what: '30 runs in all', timeoutMs: 20_000 });
      } finally {
        await Promise.all([jobA.stop(), jobB.stop()]);
      }
      expect(most, 'instances running the job at once').to.equal(1);
      expect(inside, 'runs still going after stop').to.equal(0);
      const total = ran.a + ran.b;
      // Barrier: a job scheduled after the stop, on the same timer and lock path, runs three times meanwhile.
      let later = 0;
      const barrierJob = scheduleSingleton(a, 'tick-barrier', 1, async () => void (later += 1), log);
      try {
        await eventually(() => later >= 3, { what: 'three runs of a later job' });
      } finally {
        await barrierJob.stop();
      }
      expect(ran.a + ran.b, 'runs after stop').to.equal(total);
    });
  });
});
