import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import { createControlApp } from '../../../http/control/app.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../../infra/db/embedded.js';
import { createPool } from '../../../infra/db/pool.js';
import { ReadPool } from '../../../infra/db/read-pool.js';
import { replicaStatus } from '../../../cli/system.js';
import { createLogger } from '../../../infra/logger.js';
import { ADMIN_TOKEN, node } from '../../http/control/fleet/support.js';
import { api, expectResponse, type ApiResponse } from '../../support/http.js';
import { dn42Control } from '../../support/cli.js';
import { givenPortalSession } from '../../support/portal.js';
import { parsePrometheus, samplesOf } from '../../support/prometheus.js';
import { startStandbyOf, type Standby } from '../../support/standby.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';
import { eventually } from '../../support/wait.js';

type App = Awaited<ReturnType<typeof startApp>>;

/**
 * DATABASE_READ_URL against a real streaming standby (issue 30): an embedded
 * primary in a temporary directory, a standby made from a base backup of it,
 * and control servers whose views read from the standby while their writes,
 * their authentication and the answers to their own writes use the primary.
 */
describe('Reads from a streaming replica (DATABASE_READ_URL)', function () {
  this.timeout(180_000);
  const log = createLogger('silent');
  let dir: string;
  let primary: EmbeddedDatabase | undefined;
  let primaryPool: pg.Pool | undefined;
  let standby: Standby | undefined;
  /** A connection to the standby: replay pause and resume, its own statistics. */
  let onStandby: pg.Client | undefined;
  /** A server that tolerates 10 minutes of lag, and one that tolerates 1 s. */
  let tolerant: { sys: TestSystem; app: App } | undefined;
  let strict: { sys: TestSystem; app: App } | undefined;

  const database = () => ({ name: 'postgres', url: primary!.url, drop: async () => {} });
  const serverOn = async (maxLag: number) => {
    const sys = await createTestSystem({
      database: database(),
      env: { ADMIN_TOKEN, DATABASE_READ_URL: standby!.url(), DATABASE_READ_MAX_LAG: String(maxLag) },
    });
    return { sys, app: await startApp(createControlApp(sys.context)) };
  };
  const admin = (s: { app: App }) => api(`${s.app.url}/control/v1`, { token: ADMIN_TOKEN });
  /** A 200 answer's body. */
  const ok = async (answer: Promise<ApiResponse>) => {
    const res = await answer;
    expectResponse(res).status(200);
    return res.body;
  };
  const consoleNodeIds = async (s: { app: App }) => ((await ok(admin(s).get('/ui/nodes'))) as { node_id: string }[]).map((n) => n.node_id);
  const reads = async (s: { app: App }) => {
    const text = (await api(s.app.url).get('/metrics')).text;
    return Object.fromEntries(samplesOf(parsePrometheus(text), 'dn42_db_reads_total').map((x) => [x.labels!.target, Number(x.value)]));
  };
  const replayPaused = async () => (await onStandby!.query(`SELECT pg_get_wal_replay_pause_state() AS s`)).rows[0].s as string;
  const pauseReplay = async () => {
    await onStandby!.query('SELECT pg_wal_replay_pause()');
    await eventually(async () => (await replayPaused()) === 'paused', { what: 'replay paused on the standby' });
  };
  const resumeReplay = async () => {
    await onStandby!.query('SELECT pg_wal_replay_resume()');
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dn42-read-replica-spec-'));
    // As root the servers run as `postgres`, which must be able to enter it.
    chmodSync(dir, 0o755);
    primary = await startEmbeddedPostgres(join(dir, 'primary'), log);
    primaryPool = new pg.Pool({ connectionString: primary.url, max: 2 });
    // As the service's own pools do: a server stopped under an idle connection must not end the run.
    primaryPool.on('error', () => {});
    standby = await startStandbyOf({ url: primary.url, pool: primaryPool, dir: join(dir, 'primary') }, join(dir, 'standby'), 'dn42-read-spec');
    onStandby = new pg.Client({ connectionString: standby.url() });
    onStandby.on('error', () => {});
    await onStandby.connect();
    // The schema is migrated on the primary and streamed to the standby like any write.
    tolerant = await serverOn(600);
    strict = await serverOn(1);
    expectResponse(await admin(tolerant).post('/admin/nodes', node('n1'))).status(201);
    await eventually(async () => (await consoleNodeIds(tolerant!)).includes('n1'), { timeoutMs: 30_000, what: 'n1 on the replica' });
  });
  after(async () => {
    for (const s of [tolerant, strict]) {
      await s?.app.close();
      await s?.sys.close();
    }
    await onStandby?.end().catch(() => {});
    await primaryPool?.end();
    await standby?.stop();
    await primary?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a console view reads from the lagging replica: a node written while replay is paused is missing there, the write and the admin API answer it from the primary, and it appears once replay resumes', async () => {
    expect((await tolerant!.sys.readPool!.check()).target).to.equal('replica');
    expect(tolerant!.sys.context.readPool, 'the views get the read pool').to.equal(tolerant!.sys.readPool);
    await pauseReplay();
    try {
      const before = await reads(tolerant!);
      // The client's own write: answered from the write's transaction on the primary.
      const answer = await admin(tolerant!).post('/admin/nodes', node('n2'));
      expectResponse(answer).status(201);
      const created = answer.body;
      expect(created.node_id).to.equal('n2');
      expectResponse(await admin(tolerant!).get('/admin/nodes/n2')).status(200);
      // The console's view comes from the replica, which has not replayed it.
      expect(await consoleNodeIds(tolerant!))
        .to.include('n1')
        .and.not.include('n2');
      const overview = await ok(admin(tolerant!).get('/ui/fleet/overview'));
      expect(overview.nodes.map((n: { node_id: string }) => n.node_id)).to.not.include('n2');
      const after = await reads(tolerant!);
      expect(after.replica, 'reads counted on the replica').to.be.above(before.replica ?? 0);
      expect(after.primary ?? 0, 'no view read fell back to the primary').to.equal(before.primary ?? 0);
      // Authentication stays on the primary: a portal session opened during the pause is accepted at once, its view read from the replica.
      const token = await givenPortalSession(tolerant!.sys);
      await ok(api(`${tolerant!.app.url}/control/v1`, { token }).get('/autopeering/nodes'));
      const portal = await reads(tolerant!);
      expect(portal.replica, 'the portal view read on the replica').to.be.above(after.replica);
      expect(portal.primary ?? 0).to.equal(before.primary ?? 0);
    } finally {
      await resumeReplay();
    }
    await eventually(async () => (await consoleNodeIds(tolerant!)).includes('n2'), { timeoutMs: 30_000, what: 'n2 on the replica after the resume' });
  });

  it('projections status prints the standby of the primary with its lag and where the views read', async () => {
    const run = await dn42Control(['projections', 'status'], { DATABASE_URL: primary!.url, DATABASE_READ_URL: standby!.url(), LOG_LEVEL: 'warn' });
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.match(/^standby dn42-read-spec\s+replay lag \d+\.\d{3} s$/m);
    expect(run.stdout).to.match(/^read replica \(DATABASE_READ_URL\) replay lag \d+\.\d{3} s: views read from the replica$/m);
  });

  it('a replica further behind than DATABASE_READ_MAX_LAG sends the views to the primary until it catches up, and projections status says where they read', async () => {
    await pauseReplay();
    try {
      expectResponse(await admin(tolerant!).post('/admin/nodes', node('n3'))).status(201);
      // More than 1 s behind while the primary keeps writing: the strict server's check moves its reads.
      const state = await eventually(
        async () => {
          await primaryPool!.query(`SELECT pg_logical_emit_message(true, 'dn42-spec', 'tick')`);
          const s = await strict!.sys.readPool!.check();
          return s.target === 'primary' && s;
        },
        { timeoutMs: 30_000, everyMs: 250, what: 'the strict server falling back to the primary' },
      );
      expect(state.fallback_reason).to.match(/^replica lag \d+\.\d s over 1 s$/);
      // What `projections status` prints: the primary's standby and where the views read.
      const status = await replicaStatus(strict!.sys);
      expect(status.standbys.map((s) => s.name)).to.deep.equal(['dn42-read-spec']);
      expect(status.read).to.include({ target: 'primary', standby: true });
      expect(await consoleNodeIds(strict!), 'the strict server reads the primary').to.include('n3');
      expect(await consoleNodeIds(tolerant!), 'the tolerant server still reads the replica').to.not.include('n3');
      const metrics = parsePrometheus((await api(strict!.app.url).get('/metrics')).text);
      expect(samplesOf(metrics, 'dn42_db_read_replica_in_use').map((s) => Number(s.value))).to.deep.equal([0]);
      expect(Number(samplesOf(metrics, 'dn42_db_read_replica_lag_seconds')[0].value)).to.be.above(1);
    } finally {
      await resumeReplay();
    }
    await eventually(async () => (await strict!.sys.readPool!.check()).target === 'replica', {
      timeoutMs: 30_000,
      what: 'the strict server back on the replica',
    });
    await eventually(async () => (await consoleNodeIds(tolerant!)).includes('n3'), { timeoutMs: 30_000, what: 'n3 on the replica' });
    const metrics = parsePrometheus((await api(strict!.app.url).get('/metrics')).text);
    expect(samplesOf(metrics, 'dn42_db_read_replica_in_use').map((s) => Number(s.value))).to.deep.equal([1]);
    expect(samplesOf(metrics, 'dn42_db_pool_connections').map((s) => `${s.labels!.pool}/${s.labels!.state}`)).to.include.members(['write/idle', 'read/idle']);
  });

  it('writes never go to the replica: every view given the read pool answers from it without a refused statement there, while the writes succeed on the primary', async () => {
    const rollbacks = async () =>
      Number((await onStandby!.query(`SELECT xact_rollback FROM pg_stat_database WHERE datname = 'postgres'`)).rows[0].xact_rollback);
    await onStandby!.query('SELECT pg_stat_clear_snapshot()');
    const before = await rollbacks();
    const client = admin(tolerant!);
    expectResponse(await client.patch('/admin/nodes/n1', { labels: { region: 44 } })).status(200);
    expectResponse(await client.post('/admin/nodes', node('n4'))).status(201);
    const token = await givenPortalSession(tolerant!.sys);
    const portal = api(`${tolerant!.app.url}/control/v1`, { token });
    for (const path of [
      '/ui/session',
      '/ui/fleet/overview',
      '/ui/fleet/traffic-breakdown',
      '/ui/fleet/traffic',
      '/ui/nodes',
      '/ui/nodes/n1/overview',
      '/ui/nodes/n1/status-events',
      '/ui/nodes/metrics',
      '/ui/audit',
      '/ui/dashboard',
      '/ui/routing/fleet-overview',
      '/ui/fleet/prefix-flaps',
      '/ui/fleet/flap-alerts',
      '/ui/fleet/flap-stats',
      '/ui/fleet/bgp-flaps',
      '/ui/fleet/peering-issues',
      '/ui/fleet/flap-peers',
    ])
      expectResponse(await client.get(path)).status(200);
    for (const path of [
      '/autopeering/nodes',
      '/autopeering/fleet/dashboard',
      '/autopeering/fleet/traffic',
      '/autopeering/fleet/traffic-breakdown',
      '/autopeering/fleet/prefix-flaps',
      '/autopeering/fleet/flap-stats',
      '/autopeering/my/flaps',
    ])
      expectResponse(await portal.get(path)).status(200);
    for (const path of ['/public/map', '/public/fleet']) expectResponse(await api(`${tolerant!.app.url}/control/v1`).get(path)).status(200);
    await onStandby!.query('SELECT pg_stat_clear_snapshot()');
    // The standby refuses any write (25006) and counts the rollback; none happened.
    expect(await rollbacks()).to.equal(before);
    expect((await reads(tolerant!)).primary ?? 0, 'nothing fell back').to.equal(0);
  });

  it('a replica that stops answering: the read in flight is answered by the primary, and the views read there until it is back', async () => {
    // Its own read pool (no timer): the fallback is the query's, not a check's.
    const replica = createPool(standby!.url(), 2);
    const fellBack: string[] = [];
    const pool = new ReadPool(replica, primaryPool!, { maxLagSeconds: 600, log, onFallback: (r) => fellBack.push(r) });
    try {
      expect((await pool.check()).target).to.equal('replica');
      expect((await pool.query('SELECT pg_is_in_recovery() AS r')).rows[0].r, 'on the standby').to.equal(true);
      await onStandby!.end();
      onStandby = undefined;
      await standby!.stop();
      standby = undefined;
      expect((await pool.query('SELECT pg_is_in_recovery() AS r')).rows[0].r, 'answered by the primary').to.equal(false);
      expect(fellBack).to.deep.equal(['lost']);
      expect(pool.state).to.include({ target: 'primary' });
      expect(pool.state.fallback_reason).to.match(/^replica failed: /);
      expect((await pool.check()).fallback_reason).to.match(/^replica unreachable: /);
      // The servers' own pools find it gone at their next check, and their views still answer.
      await eventually(async () => (await tolerant!.sys.readPool!.check()).target === 'primary', { what: 'the server falling back' });
      expect(await consoleNodeIds(tolerant!)).to.include.members(['n1', 'n2', 'n3', 'n4']);
    } finally {
      await pool.end();
    }
  });
});
