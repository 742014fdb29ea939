import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type pg from 'pg';
import { recordAudit } from '../../commands/audit.js';
import { createPool } from '../../infra/db/pool.js';
import { PgEventStore } from '../../infra/eventstore/postgres/store.js';
import { createLogger } from '../../infra/logger.js';
import { allProjections } from '../../projections/index.js';
import { ProjectionRuntime } from '../../projections/runtime/runtime.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { tableRows } from '../support/tables.js';
import { eventually } from '../support/wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SECRET = 'cli-spec-admin-token-0123456789';

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A clean environment: only what the CLI needs, plus the variables of the test. */
function cliEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...env };
}

function start(args: string[], env: Record<string, string>): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, ['cli/bin.mjs', ...args], { cwd: ROOT, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<Run>((resolve, reject) => {
    // Bound of the run: a hanging command fails the spec instead of hanging it.
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`dn42-control ${args.join(' ')} did not finish; stderr: ${stderr}`));
    }, 90_000);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, done };
}

const cli = (args: string[], env: Record<string, string>) => start(args, env).done;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('The dn42-control command line', function () {
  this.timeout(60_000);

  let db: TestDatabase;
  let env: Record<string, string>;

  before(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, LOG_LEVEL: 'warn' };
  });

  after(async () => {
    await db?.drop();
  });

  describe('config', () => {
    it('prints the effective values with secrets and URL passwords masked', async () => {
      const run = await cli(['config'], {
        DATABASE_URL: 'postgres://dn42:cli-db-password@db.example:5432/dn42',
        ADMIN_TOKEN: SECRET,
        CONTROL_PORT: '9123',
      });
      expect(run.code, run.stderr).to.equal(0);
      const lines = run.stdout.trim().split('\n');
      expect(lines).to.include('CONTROL_PORT=9123');
      expect(lines).to.include('ADMIN_TOKEN=********');
      expect(lines).to.include('DATABASE_URL=postgres://dn42:****@db.example:5432/dn42');
      expect(lines).to.include('CAPTCHA_KIND=pow');
      expect(run.stdout + run.stderr).to.not.include(SECRET);
      expect(run.stdout + run.stderr).to.not.include('cli-db-password');
    });

    it('exits non-zero and names the variable when a value is bad', async () => {
      for (const args of [['config'], ['migrate']]) {
        const run = await cli(args, { ...env, CONTROL_PORT: 'abc' });
        expect(run.code, `${args[0]} exit code`).to.not.equal(0);
        expect(run.code).to.not.equal(null);
        expect(run.stderr).to.include('CONTROL_PORT');
        expect(run.stdout).to.equal('');
      }
    });
  });

  describe('on a database', () => {
    let pool: pg.Pool;
    let store: PgEventStore;

    before(async () => {
      const run = await cli(['migrate'], env);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.equal('migrations up to date\n');
      pool = createPool(db.url, 4);
      // Appends from this process write the inline audit_log like the services do.
      const log = createLogger('silent');
      store = new PgEventStore({ pool, log });
      await new ProjectionRuntime(store, pool, allProjections, log).attach();
      const days = [new Date('2026-11-01T10:00:00Z'), new Date('2026-11-01T11:00:00Z'), new Date('2026-11-02T09:30:00Z'), new Date('2026-11-03T08:15:00Z')];
      for (const [i, at] of days.entries()) {
        await recordAudit(
          store,
          { actor: `admin-${i}`, method: 'POST', path: `/control/v1/admin/nodes/${i}`, status_code: 201, detail: null },
          { actor: 'x', requestId: `cli-${i}` },
          at,
        );
      }
    });

    after(async () => {
      await pool?.end();
    });

    it('migrate created the tables and finds nothing left to do the second time', async () => {
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM schema_migrations`);
      const again = await cli(['migrate'], env);
      expect(again.code, again.stderr).to.equal(0);
      const after = await pool.query(`SELECT count(*)::int AS n FROM schema_migrations`);
      expect(after.rows[0].n).to.equal(rows[0].n);
      expect(rows[0].n).to.be.greaterThan(0);
    });

    it('projections status lists every projection with its checkpoint and lag', async () => {
      const run = await cli(['projections', 'status'], env);
      expect(run.code, run.stderr).to.equal(0);
      const line = run.stdout.split('\n').find((l) => l.startsWith('audit_log '));
      expect(line, run.stdout).to.match(/^audit_log\s+inline\s+checkpoint \d+\/\d+\s+head \d+\/\d+\s+lag 0$/);
      const json = await cli(['projections', 'status', '--json'], env);
      const status = JSON.parse(json.stdout) as { name: string; mode: string; lag_events: number }[];
      expect(status.map((s) => s.name)).to.deep.equal(allProjections.map((p) => p.name));
      expect(status.find((s) => s.name === 'audit_log')).to.include({ mode: 'inline', lag_events: 0 });
    });

    it('projections rebuild prints a line per projection and leaves audit_log identical', async () => {
      const before = await tableRows(pool, 'audit_log', 'id');
      expect(before).to.have.length(4);
      // Default log level: logs must not mix into what the command prints.
      const run = await cli(['projections', 'rebuild'], { DATABASE_URL: db.url });
      expect(run.code, run.stderr).to.equal(0);
      const lines = run.stdout.trim().split('\n');
      expect(lines).to.have.length(allProjections.length);
      for (const p of allProjections)
        expect(
          lines.some((l) => new RegExp(`^${p.name}: rebuilt from \\d+ events, checkpoint \\d+/\\d+$`).test(l)),
          p.name,
        ).to.equal(true);
      expect(lines.find((l) => l.startsWith('audit_log:'))).to.match(/rebuilt from 4 events/);
      expect(await tableRows(pool, 'audit_log', 'id')).to.deep.equal(before);
      const { rows } = await pool.query(`SELECT rebuilt_at FROM projection_checkpoints WHERE name = 'audit_log'`);
      expect(rows[0].rebuilt_at).to.not.equal(null);
    });

    it('events tail -n 2 prints the two newest events as JSON lines, oldest first', async () => {
      // The reader's guard is cluster-wide: wait until no other transaction holds our appends back.
      let newest = await store.readLast(2);
      await eventually(
        async () => {
          newest = await store.readLast(2);
          return newest.length === 2 && (newest[1].data as { path: string }).path.endsWith('/3');
        },
        { what: 'the appends to be deliverable', timeoutMs: 10_000 },
      );
      const run = await cli(['events', 'tail', '-n', '2'], { DATABASE_URL: db.url });
      expect(run.code, run.stderr).to.equal(0);
      const lines = run.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines.map((l) => [l.position, l.stream, l.version, l.type, l.data.path])).to.deep.equal(
        newest.map((e) => [`${e.position.tx}/${e.position.pos}`, e.streamId, e.version, e.type, (e.data as { path: string }).path]),
      );
      expect(lines.map((l) => l.data.path)).to.deep.equal(['/control/v1/admin/nodes/2', '/control/v1/admin/nodes/3']);
      expect(lines[1].metadata).to.include({ actor: 'admin-3', requestId: 'cli-3' });
    });

    it('serve with no database configured starts an embedded PostgreSQL, answers every health check, keeps its data and stops cleanly', async function () {
      this.timeout(240_000);
      const dataDir = mkdtempSync(join(tmpdir(), 'dn42-embedded-'));
      const ports = { CONTROL_PORT: await freePort(), IDENTITY_PORT: await freePort(), REGISTRY_PORT: await freePort(), SITE_PORT: await freePort() };
      const env = { DATA_DIR: dataDir, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) };
      const get = (port: number, path: string) =>
        fetch(`http://127.0.0.1:${port}${path}`, { redirect: 'manual' }).then(
          async (r) => ({ status: r.status, body: await r.text() }),
          () => ({ status: 0, body: '' }),
        );
      try {
        for (const round of [1, 2]) {
          const { child, done } = start(['serve'], env);
          try {
            await eventually(async () => (await get(ports.SITE_PORT, '/')).status === 200, {
              what: `round ${round}: the site to answer`,
              timeoutMs: 60_000,
              everyMs: 200,
            });
            for (const port of [ports.CONTROL_PORT, ports.IDENTITY_PORT, ports.REGISTRY_PORT]) {
              const res = await get(port, '/healthz');
              expect(res.status, `round ${round}: /healthz on ${port}`).to.equal(200);
              expect(JSON.parse(res.body)).to.deep.equal({ status: 'ok', database: 'up' });
            }
            // A write that is audited (refused: no bearer token), so the second round can find it again.
            if (round === 1) expect((await fetch(`http://127.0.0.1:${ports.CONTROL_PORT}/control/v1/admin/nothing`, { method: 'POST' })).status).to.equal(401);
          } finally {
            child.kill('SIGTERM');
          }
          const run = await done;
          expect(run.code, run.stderr).to.equal(0);
          expect(existsSync(join(dataDir, 'pg', 'postmaster.pid')), 'PostgreSQL stopped').to.equal(false);
        }
        const tail = await cli(['events', 'tail', '-n', '5'], env);
        expect(tail.code, tail.stderr).to.equal(0);
        expect(tail.stdout).to.contain('/control/v1/admin/nothing');
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });

    it('serve identity registry: the identity service reaches the replica next to it without REGISTRY_URL', async () => {
      const [identityPort, registryPort] = [await freePort(), await freePort()];
      const { child, done } = start(['serve', 'identity', 'registry'], {
        ...env,
        IDENTITY_PORT: String(identityPort),
        REGISTRY_PORT: String(registryPort),
        IDENTITY_ISSUER: `http://127.0.0.1:${identityPort}`,
        IDENTITY_ADMIN_TOKEN: SECRET,
      });
      try {
        let answer: { status: number; body: unknown } = { status: 0, body: null };
        await eventually(
          async () => {
            answer = await fetch(`http://127.0.0.1:${identityPort}/api/v1/registry/status`, { headers: { authorization: `Bearer ${SECRET}` } }).then(
              async (r) => ({ status: r.status, body: await r.json() }),
              () => ({ status: 0, body: null }),
            );
            return answer.status !== 0;
          },
          { what: 'the identity service to answer registry status', timeoutMs: 60_000, everyMs: 100 },
        );
        // Without the shared address and token this is 503 (replica unreachable).
        expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
        // A loopback start without REGISTRY_SOURCE serves the sample registry.
        expect(answer.body).to.include({ enabled: true });
      } finally {
        child.kill('SIGTERM');
      }
      expect((await done).code).to.equal(0);
    });

    it('serve control answers /healthz and exits 0 on SIGTERM', async () => {
      const port = await freePort();
      const { child, done } = start(['serve', 'control'], { ...env, CONTROL_PORT: String(port) });
      try {
        let status = 0;
        await eventually(
          async () => {
            status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
              (r) => r.status,
              () => 0,
            );
            return status !== 0;
          },
          { what: 'the control server to answer /healthz', timeoutMs: 60_000, everyMs: 100 },
        );
        expect(status).to.equal(200);
      } finally {
        child.kill('SIGTERM');
      }
      const run = await done;
      expect(run.signal, run.stderr).to.equal(null);
      expect(run.code, run.stderr).to.equal(0);
    });
  });
});
