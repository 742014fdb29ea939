import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { alive } from '../../infra/db/embedded.js';
import { dn42Control, ROOT, serveUntilUp } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import { eventually } from '../support/wait.js';

const postmasterPid = (dataDir: string) => Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);

describe('The embedded PostgreSQL of dn42-control', function () {
  this.timeout(300_000);

  let work: string;
  before(() => {
    work = mkdtempSync(join(tmpdir(), 'dn42-embedded-spec-'));
    // As root, PostgreSQL runs as the postgres user, which must be able to enter DATA_DIR's parents.
    chmodSync(work, 0o755);
  });
  after(async () => {
    // Whatever a failed run left behind: the server of DATA_DIR stopped, then its files removed.
    const pidFile = join(work, 'data', 'pg', 'postmaster.pid');
    if (existsSync(pidFile)) {
      const left = postmasterPid(join(work, 'data'));
      if (left > 0 && alive(left)) {
        process.kill(left, 'SIGINT');
        await eventually(() => !alive(left), { what: 'the left-behind PostgreSQL to stop', timeoutMs: 30_000, everyMs: 100 });
      }
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('a read-only command refuses a DATA_DIR that holds no cluster, and creates nothing there', async () => {
    const dataDir = join(work, 'empty');
    for (const args of [
      ['projections', 'status'],
      ['events', 'tail', '-n', '1'],
      ['projections', 'rebuild'],
    ]) {
      const run = await dn42Control(args, { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
      expect(run.code, args.join(' ')).to.equal(1);
      expect(run.stderr).to.include(`dn42-control: no database cluster in DATA_DIR ${dataDir}:`);
      expect(existsSync(dataDir), args.join(' ')).to.equal(false);
    }
  });

  it('takes a relative DATA_DIR from the project directory, whatever the working directory', async () => {
    const run = await dn42Control(['projections', 'status'], { DATA_DIR: '.data-relative-spec-never-made', LOG_LEVEL: 'warn' }, { cwd: work });
    expect(run.code).to.equal(1);
    expect(run.stderr).to.include(`no database cluster in DATA_DIR ${join(ROOT, '.data-relative-spec-never-made')}:`);
    expect(existsSync(join(work, '.data-relative-spec-never-made'))).to.equal(false);
  });

  it('a server killed with SIGKILL leaves its PostgreSQL behind; the next start stops that one and runs its own, which Ctrl-C stops too', async () => {
    const dataDir = join(work, 'data');
    const ports = { control: await freePort(), identity: await freePort(), registry: await freePort(), site: await freePort() };
    const env = {
      DATA_DIR: dataDir,
      LOG_FORMAT: 'json',
      CONTROL_PORT: String(ports.control),
      IDENTITY_PORT: String(ports.identity),
      REGISTRY_PORT: String(ports.registry),
      SITE_PORT: String(ports.site),
      IDENTITY_ISSUER: `http://127.0.0.1:${ports.identity}`,
      REGISTRY_SYNC_INTERVAL: '0',
    };
    const first = await serveUntilUp(env, ports, 240_000);
    const orphan = postmasterPid(dataDir);
    expect(alive(orphan)).to.equal(true);
    const killed = await first.stop('SIGKILL');
    expect(killed.signal).to.equal('SIGKILL');
    // PostgreSQL runs in its own process group: the kill of its parent does not reach it.
    expect(alive(orphan), 'PostgreSQL outlives a SIGKILLed server').to.equal(true);

    const second = await serveUntilUp(env, ports, 240_000);
    try {
      expect(second.output().stdout).to.include('stopping the embedded PostgreSQL a crashed server left running');
      expect(alive(orphan), 'the orphan is gone').to.equal(false);
      const own = postmasterPid(dataDir);
      expect(own).to.not.equal(orphan);
      // The data survived: the admin token made at the first start still opens /admin.
      const token = JSON.parse(readFileSync(join(dataDir, 'local-secrets.json'), 'utf8')).admin_token as string;
      expect(second.output().stdout).to.not.include(token);
      expect((await fetch(`http://127.0.0.1:${ports.control}/control/v1/admin/nodes`, { headers: { authorization: `Bearer ${token}` } })).status).to.equal(200);

      const run = await second.stop('SIGINT');
      expect(run.code, run.stderr).to.equal(0);
      await eventually(() => !alive(own), { what: 'the second PostgreSQL to be gone', timeoutMs: 10_000, everyMs: 50 });
      expect(existsSync(join(dataDir, 'pg', 'postmaster.pid'))).to.equal(false);
      expect(run.stdout + run.stderr).to.not.match(/\n\s+at /);
    } finally {
      second.child.kill('SIGKILL');
    }
  });
});
