import { expect } from 'chai';
import pg from 'pg';
import { PgListener } from '../../infra/db/listener.js';
import { migrate } from '../../infra/db/migrate.js';
import { createPool } from '../../infra/db/pool.js';
import { eventStoreMigrations, PgEventStore } from '../../infra/eventstore/postgres/store.js';
import { createLogger } from '../../infra/logger.js';
import { createTestDatabase, testServer, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/tables.js';

const log = createLogger('silent');
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

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
      await waitFor('the first notification', () => received.includes('spec_channel:before'));

      expect(await killListeners(pool)).to.equal(1);
      await waitFor('the reconnection', () => reconnected === 1);
      const pids = await listenerPids(pool);
      expect(pids).to.have.length(1);
      expect(pids[0]).to.not.equal(first);

      // Channels registered before the kill are listened to again; new ones too.
      await listener.listen('spec_other');
      await pool.query(`SELECT pg_notify('spec_channel', 'after'), pg_notify('spec_other', 'other')`);
      await waitFor('notifications after the reconnection', () => received.includes('spec_channel:after') && received.includes('spec_other:other'));

      // A second kill is survived the same way.
      expect(await killListeners(pool)).to.equal(1);
      await waitFor('the second reconnection', () => reconnected === 2);
      await pool.query(`SELECT pg_notify('spec_channel', 'again')`);
      await waitFor('a notification after the second reconnection', () => received.includes('spec_channel:again'));
    } finally {
      await listener.close();
    }
    // Closed: no connection left behind, and none comes back.
    await waitFor('the listener connection to close', async () => (await listenerPids(pool)).length === 0);
  });

  it('keeps a store subscription delivering events appended after its backend is killed', async () => {
    const listener = new PgListener(db.url, log);
    // A poll interval far beyond the test: delivery here comes from NOTIFY and the
    // reconnection wake-up, not from polling.
    const store = new PgEventStore({ pool, listener, log, pollIntervalMs: 120_000 });
    // Open the pool's connections now: later the database refuses new ones for a while.
    await Promise.all(Array.from({ length: 5 }, () => pool.query('SELECT pg_sleep(0.05)')));
    const seen: string[] = [];
    const sub = store.subscribeAll((e) => {
      if (e.streamId === 'listener-spec') seen.push((e.data as { name: string }).name);
    }, { from: await store.headPosition() });
    // Appends come from another store, as from another process: in-process
    // watchers are woken directly, so only NOTIFY and reconnection reach this one.
    const writer = new PgEventStore({ pool, log });
    const append = (name: string) => writer.append([{ streamId: 'listener-spec', expected: 'any', events: [{ type: 'Ping', data: { name } }] }], { actor: 'spec' });
    try {
      await waitFor('the LISTEN connection', async () => (await listenerPids(pool)).length === 1);
      await append('first');
      await waitFor('the first event', () => seen.length === 1);

      // Appended while the listener is down and cannot come back (the database
      // refuses new connections): no NOTIFY reaches anyone.
      await setConnections(false);
      expect(await killListeners(pool)).to.equal(1);
      await waitFor('the LISTEN connection to be gone', async () => (await listenerPids(pool)).length === 0);
      await append('during');
      await sleep(300);
      expect(seen, 'delivered with no LISTEN connection').to.deep.equal(['first']);
      // Once it reconnects, its wake-up makes the subscription read again and find it.
      await setConnections(true);
      await waitFor('the event appended while reconnecting', () => seen.length === 2);

      // Appended after the reconnection: NOTIFY works again.
      await waitFor('a new LISTEN connection', async () => (await listenerPids(pool)).length === 1);
      await append('after');
      await waitFor('the event appended after reconnecting', () => seen.length === 3);
      expect(seen).to.deep.equal(['first', 'during', 'after']);
    } finally {
      await setConnections(true);
      await sub.stop();
      await listener.close();
    }
  });
});
