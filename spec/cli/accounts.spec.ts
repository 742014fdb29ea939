import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { createControlApp } from '../../http/control/app.js';
import { api, expectResponse } from '../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../support/system.js';
import { loginAs, POW_ENV } from '../http/control/support.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `dn42-control accounts create <username>` with `input` on standard input. */
function createViaCli(databaseUrl: string, username: string, input: string): Promise<Run> {
  const child = spawn(process.execPath, ['cli/bin.mjs', 'accounts', 'create', username], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    // Bound of the run: a hanging command fails the spec instead of hanging it.
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`accounts create did not finish; stderr: ${stderr}`));
    }, 30_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('dn42-control accounts create', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  let client: ReturnType<typeof api>;
  let close: () => Promise<void>;

  before(async () => {
    sys = await createTestSystem({ env: POW_ENV });
    const server = await startApp(createControlApp(sys.context));
    client = api(server.url);
    close = server.close;
  });
  after(async () => {
    await close?.();
    await sys?.close();
  });

  it('creates an account whose password (from stdin, without its line break) logs in', async () => {
    const run = await createViaCli(sys.db.url, 'operator', 'operator password\n');
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.equal('account operator created\n');
    expectResponse(await loginAs(client, 'operator', 'operator password')).status(200);
  });

  it('refuses an existing username with a clear message and a non-zero exit', async () => {
    const run = await createViaCli(sys.db.url, 'operator', 'another password');
    expect(run.code).to.not.equal(0);
    expect(run.stderr).to.contain('account operator already exists');
    expectResponse(await loginAs(client, 'operator', 'another password')).status(401);
  });

  it('refuses a password under 8 characters and a bad username', async () => {
    const short = await createViaCli(sys.db.url, 'shorty', 'seven77\n');
    expect(short.code).to.not.equal(0);
    expect(short.stderr).to.contain('invalid password: at least 8 characters');
    const bad = await createViaCli(sys.db.url, 'Bad Name', 'long enough password');
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.contain('invalid username');
    const { rows } = await sys.pool.query(`SELECT username FROM accounts ORDER BY username`);
    expect(rows.map((r) => r.username)).to.deep.equal(['operator']);
  });
});
