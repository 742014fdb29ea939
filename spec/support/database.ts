import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../infra/db/embedded.js';
import { migrate, migrationFiles, type MigrationSet } from '../../infra/db/migrate.js';
import { createPool } from '../../infra/db/pool.js';
import { eventStoreMigrations } from '../../infra/eventstore/postgres/store.js';
import { createLogger } from '../../infra/logger.js';
import { eventually } from './wait.js';

/**
 * Where test databases come from: `DATABASE_URL` when set, else the local server
 * on 127.0.0.1:5432 when it answers, else an embedded PostgreSQL under
 * `.data/test-pg` (`TEST_EMBEDDED=1` forces the embedded one). Every suite gets a
 * database of its own, created (empty or from a migrated template) and dropped afterwards.
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

/**
 * Creates a database of its own on the test server: empty, or, given migration
 * sets, already migrated with exactly those (copied from a template database
 * built once for them, see `templateFor`).
 */
export async function createTestDatabase(sets?: readonly MigrationSet[]): Promise<TestDatabase> {
  const { adminUrl } = await testServer();
  const name = sets ? await copyFor(sets) : await createDatabase(adminUrl, (admin, db) => admin.query(`CREATE DATABASE ${db}`));
  return {
    name,
    url: databaseUrl(adminUrl, name),
    async drop() {
      // In the background: the next suite need not wait for it; the run's teardown does (settleDrops).
      const dropping = dropDatabase(adminUrl, name);
      drops.add(dropping);
      void dropping.finally(() => drops.delete(dropping));
    },
  };
}

async function createDatabase(adminUrl: string, create: (admin: pg.Client, name: string) => Promise<unknown>): Promise<string> {
  const name = `dn42_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await create(admin, name);
  } finally {
    await admin.end();
  }
  return name;
}

const drops = new Set<Promise<void>>();

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    // Race: pg's pool.end() resolves before its sockets have closed; forcing
    // the drop then terminates those sessions, and the closing clients (no
    // longer listened to) raise an uncaught error. Give them a moment first.
    await eventually(async () => !(await sessionsOn(client, name)), { timeoutMs: 2000, everyMs: 50 }).catch(() => {});
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Waits for every database drop still running, and drops the spare copies (mocha's global teardown, before the server stops). */
export async function settleDrops(): Promise<void> {
  const { adminUrl } = await testServer();
  const left = [...spares.values()];
  spares.clear();
  for (const name of await Promise.all(left)) if (name) drops.add(dropDatabase(adminUrl, name));
  const failed = (await Promise.allSettled([...drops])).filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  for (const f of failed) console.error('a test database was not dropped:', f.reason);
}

function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function sessionsOn(client: pg.Client, name: string): Promise<number> {
  const { rows } = await client.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
  return rows[0].n as number;
}

/*
 * Template databases: every suite used to create a database and run all
 * migrations; now a run migrates once into a template and each suite's database
 * is a copy (`CREATE DATABASE ... TEMPLATE`). Several worktrees test against one
 * server at once, with different migrations, so:
 * - a template is named by a hash of its migration sets (names, order, every
 *   file's name and content): a changed migration is a new template;
 * - it is built under a session advisory lock of the admin connection (one
 *   builder per template, the others wait and find it), under a temporary name
 *   renamed when complete, so a half-built template is never copied;
 * - it takes no connections once built (a connected session would make
 *   `CREATE DATABASE ... TEMPLATE` refuse); that refusal is retried briefly;
 * - a build prunes the templates built more than a day ago, each only under
 *   its lock and without waiting for a copy in progress (a pruned template that
 *   is still wanted is built again).
 */
const TEMPLATE_PREFIX = 'dn42_tpl_';
const BUILDING_PREFIX = 'dn42_tpb_';
const TEMPLATE_LOCK_CLASS = 4242;
const PRUNE_AFTER_MS = 24 * 60 * 60 * 1000;

/** The template's name for these migration sets: changes when any set, file name or file content changes. */
export function templateName(sets: readonly MigrationSet[]): string {
  const hash = createHash('sha256');
  for (const set of sets) {
    hash.update(`set\0${set.name}\0`);
    for (const file of migrationFiles(set.dir))
      hash
        .update(`file\0${file}\0`)
        .update(readFileSync(join(set.dir, file)))
        .update('\0');
  }
  return `${TEMPLATE_PREFIX}${hash.digest('hex').slice(0, 24)}`;
}

const templates = new Map<string, Promise<string>>();

/** The template database of these sets, built (once per run, or found) on first use. */
function templateFor(sets: readonly MigrationSet[]): Promise<string> {
  const name = templateName(sets);
  let template = templates.get(name);
  if (!template) {
    template = buildTemplate(name, sets);
    templates.set(name, template);
    template.catch(() => templates.delete(name));
  }
  return template;
}

/** How many copies of each template this run asked for; the spare copy of each made ahead of the next ask. */
const asked = new Map<string, number>();
const spares = new Map<string, Promise<string | undefined>>();

/**
 * A copy of the sets' template. From the second ask of a template on, the
 * next copy is made ahead, while the suite that asked runs (a run of one
 * suite makes none in vain).
 */
async function copyFor(sets: readonly MigrationSet[]): Promise<string> {
  const { adminUrl } = await testServer();
  const key = templateName(sets);
  const copy = () => createDatabase(adminUrl, (admin, name) => createFromTemplate(admin, name, sets));
  const spare = spares.get(key);
  spares.delete(key);
  const name = (await spare) ?? (await copy());
  const times = (asked.get(key) ?? 0) + 1;
  asked.set(key, times);
  if (times >= 2)
    spares.set(
      key,
      copy().catch(() => undefined),
    ); // a failed spare: the next ask copies itself
  return name;
}

async function createFromTemplate(admin: pg.Client, name: string, sets: readonly MigrationSet[]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const template = await templateFor(sets);
    try {
      await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
      return;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (attempt >= 50) throw err;
      if (code === '3D000')
        templates.delete(template); // pruned meanwhile by another run: built again
      else if (code === '55006')
        await new Promise((resolve) => setTimeout(resolve, 100)); // a session on the template: retried briefly
      else throw err;
    }
  }
}

async function buildTemplate(name: string, sets: readonly MigrationSet[]): Promise<string> {
  const { adminUrl } = await testServer();
  const admin = new pg.Client({ connectionString: adminUrl, application_name: 'dn42-spec:template' });
  await admin.connect();
  try {
    // Session lock: released by the unlock below or, if this process dies, with the session.
    await admin.query('SELECT pg_advisory_lock($1, hashtext($2))', [TEMPLATE_LOCK_CLASS, name]);
    try {
      if ((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1) return name;
      const building = `${BUILDING_PREFIX}${name.slice(TEMPLATE_PREFIX.length)}`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`); // a builder that died halfway
      await admin.query(`CREATE DATABASE ${building}`);
      const pool = createPool(databaseUrl(adminUrl, building), 2);
      try {
        await migrate(pool, sets);
      } finally {
        await pool.end();
      }
      await eventually(async () => !(await sessionsOn(admin, building)), { what: `the sessions on ${building} to close` });
      await admin.query(`ALTER DATABASE ${building} ALLOW_CONNECTIONS false`);
      await admin.query(`COMMENT ON DATABASE ${building} IS '${new Date().toISOString()}'`);
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    } finally {
      await admin.query('SELECT pg_advisory_unlock($1, hashtext($2))', [TEMPLATE_LOCK_CLASS, name]);
    }
    await pruneTemplates(admin, name);
    return name;
  } finally {
    await admin.end();
  }
}

/** Drops the templates built more than a day ago (not `keep`), each under its lock, none that is being copied. */
async function pruneTemplates(admin: pg.Client, keep: string): Promise<void> {
  const { rows } = await admin.query<{ datname: string; built: string | null }>(
    `SELECT datname, shobj_description(oid, 'pg_database') AS built FROM pg_database WHERE starts_with(datname, $1) AND datname <> $2`,
    [TEMPLATE_PREFIX, keep],
  );
  for (const { datname, built } of rows) {
    const at = Date.parse(built ?? '');
    if (!(Date.now() - at > PRUNE_AFTER_MS)) continue;
    const locked = (await admin.query('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [TEMPLATE_LOCK_CLASS, datname])).rows[0].ok as boolean;
    if (!locked) continue;
    try {
      // A copy in progress holds the template: give up on it rather than wait.
      await admin.query(`SET lock_timeout = '1s'`);
      await admin.query(`DROP DATABASE IF EXISTS ${datname}`).catch(() => {});
    } finally {
      await admin.query('RESET lock_timeout');
      await admin.query('SELECT pg_advisory_unlock($1, hashtext($2))', [TEMPLATE_LOCK_CLASS, datname]);
    }
  }
}

/**
 * Mocha hooks for a suite that works on a database of its own: a fresh one with
 * the tables of `sets` (none: empty), and a pool on it, both gone after the suite.
 * Read `db` and `pool` inside tests (they are set in `before`).
 */
export function useTestDatabase(sets: readonly MigrationSet[], poolSize: number): { readonly db: TestDatabase; readonly pool: pg.Pool } {
  const handle = {} as { db: TestDatabase; pool: pg.Pool };
  before(async () => {
    handle.db = await createTestDatabase(sets);
    handle.pool = createPool(handle.db.url, poolSize);
  });
  after(async () => {
    await handle.pool?.end();
    await handle.db?.drop();
  });
  return handle;
}

/** `useTestDatabase` with the event store's tables. */
export function useStoreDatabase(poolSize = 10): { readonly db: TestDatabase; readonly pool: pg.Pool } {
  return useTestDatabase([eventStoreMigrations], poolSize);
}
