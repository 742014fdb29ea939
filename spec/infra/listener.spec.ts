import { expect } from 'chai';
import pg from 'pg';
import { pino } from 'pino';
import { PgListener } from '../../infra/db/listener.js';
import { migrate } from '../../infra/db/migrate.js';
import { createPool } from '../../infra/db/pool.js';
import { eventStoreMigrations, PgEventStore } from '../../infra/eventstore/postgres/store.js';
import { createLogger } from '../../infra/logger.js';
import { createTestDatabase, testServer, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/wait.js';

const log = createLogger('silent');

/** Backend pids of this database's LISTEN connections. */
async function listenerPids(pool: pg.Pool): Promise<number[]> {
  const { rows } = await pool.query(
    `SELECT pid FROM pg_stat_activity WHERE application_name = 'dn42-control:listener' AND datname = current_database() ORDER BY pid`,
  );
  return rows.map((r) => r.pid as number);
}

async function killListeners(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query(
    `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = 'dn42-control:listener' AND datname = current_database()`,
  );
  return rows.filter((r) => r.killed).length;
}

describe('The LISTEN connection', function () {
  this.timeout(30_000);

  let db: TestDatabase;
  let pool: pg.Pool;

  before(async () => {
    db = await createTestDatabase();
    pool = createPool(db.url, 5);
    await migrate(pool, [eventStoreMigrations]);
  });

  /** Lets new sessions into the test database, or refuses them (open ones stay). */
  const setConnections = async (allow: boolean) => {
    const admin = new pg.Client({ connectionString: (await testServer()).adminUrl });
    await admin.connect();
    try {
      await admin.query(`ALTER DATABASE ${db.name} ALLOW_CONNECTIONS ${allow}`);
    } finally {
      await admin.end();
    }
  };

  after(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('reconnects after its backend is killed and receives notifications again', async () => {
    const listener = new PgListener(db.url, log);
    const received: string[] = [];
    let reconnected = 0;
    listener.on('notification', (channel: string, payload: string) => received.push(`${channel}:${payload}`));
    listener.on('reconnected', () => (reconnected += 1));
    try {
      await listener.listen('spec_channel');
      const [first] = await listenerPids(pool);
      expect(first).to.be.a('number');
      await pool.query(`SELECT pg_notify('spec_channel', 'before')`);
      await eventually(() => received.includes('spec_channel:before'), { what: 'the first notification', timeoutMs: 10_000 });

      expect(await killListeners(pool)).to.equal(1);
      await eventually(() => reconnected === 1, { what: 'the reconnection', timeoutMs: 10_000 });
      const pids = await listenerPids(pool);
      expect(pids).to.have.length(1);
      expect(pids[0]).to.not.equal(first);

      // Channels registered before the kill are listened to again; new ones too.
      await listener.listen('spec_other');
      await pool.query(`SELECT pg_notify('spec_channel', 'after'), pg_notify('spec_other', 'other')`);
      await eventually(() => received.includes('spec_channel:after') && received.includes('spec_other:other'), {
        what: 'notifications after the reconnection',
        timeoutMs: 10_000,
      });

      // A second kill is survived the same way.
      expect(await killListeners(pool)).to.equal(1);
      await eventually(() => reconnected === 2, { what: 'the second reconnection', timeoutMs: 10_000 });
      await pool.query(`SELECT pg_notify('spec_channel', 'again')`);
      await eventually(() => received.includes('spec_channel:again'), { what: 'a notification after the second reconnection', timeoutMs: 10_000 });
    } finally {
      await listener.close();
    }
    // Closed: no connection left behind, and none comes back.
    await eventually(async () => (await listenerPids(pool)).length === 0, { what: 'the listener connection to close', timeoutMs: 10_000 });
  });

  it('keeps a store subscription delivering events appended after its backend is killed', async () => {
    // The listener's failed reconnection attempts, read from its log.
    let failedAttempts = 0;
    const watched = pino(
      { level: 'warn' },
      { write: (line: string) => void (JSON.parse(line).msg === 'LISTEN connection failed; retrying' && failedAttempts++) },
    );
    const listener = new PgListener(db.url, watched);
    // A poll interval far beyond the test: delivery here comes from NOTIFY and the
    // reconnection wake-up, not from polling.
    const store = new PgEventStore({ pool, listener, log, pollIntervalMs: 120_000 });
    // Open the pool's connections now: later the database refuses new ones for a while.
    await Promise.all(Array.from({ length: 5 }, () => pool.query('SELECT pg_sleep(0.05)')));
    const seen: string[] = [];
    const sub = store.subscribeAll(
      (e) => {
        if (e.streamId === 'listener-spec') seen.push((e.data as { name: string }).name);
      },
      { from: await store.headPosition() },
    );
    // Appends come from another store, as from another process: in-process
    // watchers are woken directly, so only NOTIFY and reconnection reach this one.
    const writer = new PgEventStore({ pool, log });
    const append = (name: string) =>
      writer.append([{ streamId: 'listener-spec', expected: 'any', events: [{ type: 'Ping', data: { name } }] }], { actor: 'spec' });
    try {
      await eventually(async () => (await listenerPids(pool)).length === 1, { what: 'the LISTEN connection', timeoutMs: 10_000 });
      await append('first');
      await eventually(() => seen.length === 1, { what: 'the first event', timeoutMs: 10_000 });

      // Appended while the listener is down and cannot come back (the database
      // refuses new connections): no NOTIFY reaches anyone.
      await setConnections(false);
      expect(await killListeners(pool)).to.equal(1);
      await eventually(async () => (await listenerPids(pool)).length === 0, { what: 'the LISTEN connection to be gone', timeoutMs: 10_000 });
      await append('during');
      // Barrier: a reconnection attempt fails after the append; the listener was down all along, and nothing else wakes the subscription.
      const failed = failedAttempts;
      await eventually(() => failedAttempts > failed, { what: 'a failed reconnection attempt', timeoutMs: 10_000 });
      expect(seen, 'delivered with no LISTEN connection').to.deep.equal(['first']);
      // Once it reconnects, its wake-up makes the subscription read again and find it.
      await setConnections(true);
      await eventually(() => seen.length === 2, { what: 'the event appended while reconnecting', timeoutMs: 10_000 });

      // Appended after the reconnection: NOTIFY works again.
      await eventually(async () => (await listenerPids(pool)).length === 1, { what: 'a new LISTEN connection', timeoutMs: 10_000 });
      await append('after');
      await eventually(() => seen.length === 3, { what: 'the event appended after reconnecting', timeoutMs: 10_000 });
      expect(seen).to.deep.equal(['first', 'during', 'after']);
    } finally {
      await setConnections(true);
      await sub.stop();
      await listener.close();
    }
  });
});
