import { randomBytes } from 'node:crypto';
import { Socket } from 'node:net';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../infra/db/embedded.js';
import { migrate } from '../../infra/db/migrate.js';
import { createPool } from '../../infra/db/pool.js';
import { eventStoreMigrations } from '../../infra/eventstore/postgres/store.js';
import { createLogger } from '../../infra/logger.js';

/**
 * Where test databases come from: `DATABASE_URL` when set, else the local server
 * on 127.0.0.1:5432 when it answers, else an embedded PostgreSQL under
 * `.data/test-pg` (`TEST_EMBEDDED=1` forces the embedded one). Every suite gets a
 * database of its own, created empty and dropped afterwards.
 */
let server: Promise<{ adminUrl: string; embedded?: EmbeddedDatabase }> | undefined;

export function testServer(): Promise<{ adminUrl: string; embedded?: EmbeddedDatabase }> {
  server ??= (async () => {
    if (process.env.DATABASE_URL && process.env.TEST_EMBEDDED !== '1') return { adminUrl: process.env.DATABASE_URL };
    if (process.env.TEST_EMBEDDED !== '1' && (await reachable('127.0.0.1', 5432))) return { adminUrl: 'postgres://postgres@127.0.0.1:5432/postgres' };
    const embedded = await startEmbeddedPostgres('.data/test-pg', createLogger('warn'));
    return { adminUrl: embedded.url, embedded };
  })();
  return server;
}

export async function stopTestServer(): Promise<void> {
  if (!server) return;
  const { embedded } = await server;
  server = undefined;
  await embedded?.stop();
}

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500);
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host);
  });
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** Creates an empty database of its own on the test server. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const { adminUrl } = await testServer();
  const name = `dn42_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        // Race: pg's pool.end() resolves before its sockets have closed; forcing
        // the drop then terminates those sessions, and the closing clients (no
        // longer listened to) raise an uncaught error. Give them a moment first.
        for (let i = 0; i < 40; i++) {
          const { rows } = await client.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
          if (rows[0].n === 0) break;
          await new Promise((res) => setTimeout(res, 50));
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Mocha hooks for a suite that works on the event store alone: a fresh database
 * with the store's tables, and a pool on it, both gone after the suite. Read
 * `db` and `pool` inside tests (they are set in `before`).
 */
export function useStoreDatabase(poolSize = 10): { readonly db: TestDatabase; readonly pool: pg.Pool } {
  const handle = {} as { db: TestDatabase; pool: pg.Pool };
  before(async () => {
    handle.db = await createTestDatabase();
    handle.pool = createPool(handle.db.url, poolSize);
    await migrate(handle.pool, [eventStoreMigrations]);
  });
  after(async () => {
    await handle.pool.end();
    await handle.db.drop();
  });
  return handle;
}
