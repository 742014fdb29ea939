import { expect } from 'chai';
import type pg from 'pg';
import { createPool, withTransaction } from '../../infra/db/pool.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/wait.js';

describe('The connection pool', function () {
  this.timeout(20_000);

  let db: TestDatabase;
  let pool: pg.Pool;
  let admin: pg.Pool;

  before(async () => {
    db = await createTestDatabase();
    pool = createPool(db.url, 2);
    admin = createPool(db.url, 1);
  });

  after(async () => {
    await pool?.end();
    await admin?.end();
    await db?.drop();
  });

  it('survives a checked-out connection being killed between two queries of a transaction', async () => {
    let error: unknown;
    await withTransaction(pool, async (client) => {
      const { rows } = await client.query('SELECT pg_backend_pid() AS pid');
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
      // Idle in the transaction while the server closes the session (the runner
      // does this while it reads events on another connection).
      await eventually(async () => (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [rows[0].pid])).rowCount === 0, {
        what: 'the session gone',
      });
      await client.query('SELECT 1');
    }).catch((err) => (error = err));
    expect(error, 'the transaction on a killed connection').to.be.instanceOf(Error);
    // The broken connection is not handed out again.
    for (let i = 0; i < 3; i++) expect((await pool.query('SELECT 1 AS one')).rows[0].one).to.equal(1);
  });

  it('waits for a slot when the server refuses a connection for its limit (53300), and fails past its connection timeout', async () => {
    // A role allowed one connection stands for a server at max_connections: the second is refused with 53300.
    const role = `dn42_limited_${process.pid}_${Date.now()}`;
    await admin.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 1`);
    const url = new URL(db.url);
    url.username = role;
    const holder = createPool(url.href, 1);
    const waiting = createPool(url.href, 1);
    const impatient = createPool(url.href, 1, { connectionTimeoutMillis: 300 });
    try {
      const held = await holder.connect();
      const answer = waiting.query('SELECT 1 AS one');
      // Barrier: the waiting pool has been refused at least once while the slot is held.
      await eventually(() => waiting.refusalsWaited >= 1, { what: 'a refused connection waited out' });
      const refused = await impatient.query('SELECT 1').catch((err: { code?: string }) => err);
      expect(refused, 'past the connection timeout').to.have.property('code', '53300');
      expect(impatient.refusalsWaited, 'tried again within the timeout').to.be.greaterThan(0);
      held.release();
      await holder.end();
      expect((await answer).rows[0].one, 'the query once the slot is free').to.equal(1);
    } finally {
      await Promise.allSettled([holder.end(), waiting.end(), impatient.end()]);
      await admin.query(`DROP ROLE ${role}`);
    }
  });
});
