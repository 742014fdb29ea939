import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { LabError, run, waitFor } from './exec.js';
import { client } from './http.js';
import { alive, spawnDetached, stopProcess } from './processes.js';
import { LAB_MARK, labPaths, PROJECT_ROOT, writeState, type LabDatabase, type LabState } from './state.js';

/**
 * The control server, identity service, registry replica and projection
 * runner in one `dn42-control serve` process on 127.0.0.1 (free ports the
 * kernel picks, never the developer's 8080-8083), on the embedded PostgreSQL
 * under the lab's DATA_DIR or, with DATABASE_URL set, on a database of the
 * lab's own there. The loopback start makes the admin token
 * (DATA_DIR/local-secrets.json). One process, because the portal registers
 * itself with the identity service of its own process.
 */

export const SERVER_ROLES = ['control', 'identity', 'registry', 'projections'] as const;
export const SERVER_PROCESS = 'servers';

/** A port on 127.0.0.1 nobody listens on now (the kernel's choice). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export const controlUrl = (state: LabState) => `http://127.0.0.1:${state.ports.control}`;
export const identityUrl = (state: LabState) => `http://127.0.0.1:${state.ports.identity}`;

/** Builds the pages the console, the portal and the authorization page need, when their build is missing. */
export async function ensureBuilds(say: (line: string) => void): Promise<void> {
  const builds: [string, string][] = [
    ['.build/authorize-page', 'build:page'],
    ['.build/web/console/index.html', 'build:web'],
  ];
  for (const [path, script] of builds) {
    if (existsSync(join(PROJECT_ROOT, path))) continue;
    say(`building ${script} (missing ${path})`);
    await run(['npm', 'run', '--silent', script], 600_000);
  }
}

/** A fresh database `dn42lab_<random>` on the server of DATABASE_URL; answers its record and its URL. */
export async function createExternalDatabase(url: string): Promise<{ database: LabDatabase; url: string }> {
  const name = `${LAB_MARK}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const own = new URL(url);
  own.pathname = `/${name}`;
  return { database: { kind: 'external', server_url: url, name }, url: own.toString() };
}

export async function dropExternalDatabase(database: LabDatabase): Promise<void> {
  if (database.kind !== 'external' || !database.server_url || !database.name?.startsWith(`${LAB_MARK}_`)) return;
  const admin = new pg.Client({ connectionString: database.server_url });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${database.name} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

function serverEnv(state: LabState): NodeJS.ProcessEnv {
  const paths = labPaths(state.state_dir);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: paths.data,
    BIND_HOST: '127.0.0.1',
    CONTROL_PORT: String(state.ports.control),
    IDENTITY_PORT: String(state.ports.identity),
    REGISTRY_PORT: String(state.ports.registry),
    SITE_PORT: String(state.ports.site),
    IDENTITY_ISSUER: identityUrl(state),
    CONTROL_URL: controlUrl(state),
    REGISTRY_SOURCE: paths.registry,
    LOG_FORMAT: 'json',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    FLAP_TIME_SCALE: String(state.flap_time_scale ?? 1),
  };
  // Settings of a developer's own server must not leak into the lab's.
  for (const key of ['ADMIN_TOKEN', 'IDENTITY_ADMIN_TOKEN', 'REGISTRY_URL', 'PORTAL_URL', 'CONSOLE_URL', 'PORTAL_OIDC_ISSUER', 'EVENTSTORE_URL'])
    delete env[key];
  if (state.database.kind === 'external' && state.database.server_url && state.database.name) {
    const url = new URL(state.database.server_url);
    url.pathname = `/${state.database.name}`;
    env.DATABASE_URL = url.toString();
  } else delete env.DATABASE_URL;
  return env;
}

/** Starts the servers (detached) and answers once the control server and the registry replica answer. */
export async function startServers(state: LabState): Promise<void> {
  const paths = labPaths(state.state_dir);
  spawnDetached(state, paths.logs, SERVER_PROCESS, ['node', `--title=${LAB_MARK}-servers`, join(PROJECT_ROOT, 'cli/bin.mjs'), 'serve', ...SERVER_ROLES], {
    env: serverEnv(state),
    cwd: PROJECT_ROOT,
  });
  const pid = state.processes.find((p) => p.name === SERVER_PROCESS)!.pid;
  const log = join(paths.logs, `${SERVER_PROCESS}.log`);
  await waitFor(`the control server on ${controlUrl(state)}`, 180_000, async () => {
    if (!alive(pid)) throw new LabError(`the servers exited; the end of ${log}:\n${tail(log)}`);
    const res = await client(controlUrl(state)).get('/healthz');
    return res.status === 200 ? true : undefined;
  });
  const secrets = join(paths.data, 'local-secrets.json');
  state.admin_token = (JSON.parse(readFileSync(secrets, 'utf8')) as { admin_token: string }).admin_token;
  writeState(state);
  await waitFor('the registry replica synced the lab registry', 120_000, async () => {
    const res = await client(identityUrl(state)).get('/api/v1/registry/status');
    return res.status === 200 && res.body?.synced_at ? true : undefined;
  });
}

export async function stopServers(state: LabState): Promise<void> {
  const entry = state.processes.find((p) => p.name === SERVER_PROCESS);
  // The servers drain, then stop their embedded PostgreSQL: give them time.
  if (entry) await stopProcess(entry.pid, 30_000);
}

export function tail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
