// Console views read from a streaming replica against the same views read from
// the primary, in the same run (issue 30, DATABASE_READ_URL).
//
// An embedded primary in a temporary directory and a real streaming standby of
// it (spec/support/standby.ts); BENCH_REPLICA_NODES (50) nodes written through
// the admin API. Two control servers on the primary's database, in this process:
// `primary` (no DATABASE_READ_URL: every read on the primary, as before) and
// `replica` (DATABASE_READ_URL on the standby). For each console view,
// BENCH_REPLICA_ROUNDS (3) alternating rounds of BENCH_REPLICA_REQUESTS (400)
// GETs over 8 keep-alive connections against each server: throughput and
// latency of each, their ratio, and the CPU time each PostgreSQL server spent
// per request (its processes' utime+stime from /proc: the postmaster, its live
// backends and the children it reaped), so the primary's load that the replica
// takes over is measured rather than assumed. The servers' CPU in a 5 s idle
// window before the views (their background: projection polls, WAL streaming)
// is subtracted from each run's, pro rata.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createControlApp } from '../http/control/app.js';
import { startEmbeddedPostgres } from '../infra/db/embedded.js';
import { node } from '../spec/http/control/fleet/support.js';
import { startStandbyOf } from '../spec/support/standby.js';
import { createTestSystem, startApp, type TestSystem } from '../spec/support/system.js';
import { eventually } from '../spec/support/wait.js';
import { combined, envInt, hammer, progress, ratio, report, round, silentLog, type Benchmark, type Timing } from './support.js';

const TOKEN = 'bench-admin-token-0123456789abcdef';
const VIEWS = ['/ui/nodes', '/ui/fleet/overview', '/ui/fleet/traffic-breakdown', '/ui/audit'] as const;
const TICKS = 100;
/** The idle window in which the servers' background CPU is measured. */
const IDLE_MS = 5_000; // clock ticks per second of /proc/<pid>/stat (USER_HZ on Linux)

/** CPU seconds of a PostgreSQL server: its postmaster (and reaped children) and the live children. */
function serverCpuSeconds(dataDir: string): number {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const fields = (pid: number | string) => {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command in parentheses: state, ppid, ... utime is field 14, stime 15, cutime 16, cstime 17 (1-based).
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  };
  const own = fields(postmaster);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const f = fields(entry);
      if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks / TICKS;
}

export const replicaReadsBench: Benchmark = {
  name: 'replica-reads',
  description: 'console views read from a streaming replica against the primary (throughput ratio, primary CPU per request freed)',
  async run() {
    const nodes = envInt('BENCH_REPLICA_NODES', 50);
    const requests = envInt('BENCH_REPLICA_REQUESTS', 400);
    const rounds = envInt('BENCH_REPLICA_ROUNDS', 3);
    const dir = mkdtempSync(join(tmpdir(), 'dn42-bench-replica-'));
    chmodSync(dir, 0o755);
    const primary = await startEmbeddedPostgres(join(dir, 'primary'), silentLog);
    const admin = new pg.Pool({ connectionString: primary.url, max: 2 });
    const standby = await startStandbyOf({ url: primary.url, pool: admin, dir: join(dir, 'primary') }, join(dir, 'standby'), 'dn42-bench');
    const servers: { sys: TestSystem; app: Awaited<ReturnType<typeof startApp>> }[] = [];
    try {
      const database = { name: 'postgres', url: primary.url, drop: async () => {} };
      for (const env of [{}, { DATABASE_READ_URL: standby.url(), DATABASE_READ_MAX_LAG: '600' }] as Record<string, string>[]) {
        const sys = await createTestSystem({ database, env: { ADMIN_TOKEN: TOKEN, ...env } });
        servers.push({ sys, app: await startApp(createControlApp(sys.context)) });
      }
      const [onPrimary, onReplica] = servers;
      progress(`replica-reads: writing ${nodes} nodes`);
      for (let i = 0; i < nodes; i++) {
        const res = await fetch(`${onPrimary.app.url}/control/v1/admin/nodes`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify(node(`n${i}`)),
        });
        if (res.status !== 201) throw new Error(`POST /admin/nodes answered ${res.status}: ${await res.text()}`);
      }
      // The replica has replayed them all before anything is timed.
      const lastNode = `${onReplica.app.url}/control/v1/ui/nodes`;
      await eventually(
        async () => {
          const res = await fetch(lastNode, { headers: { authorization: `Bearer ${TOKEN}` } });
          return ((await res.json()) as unknown[]).length === nodes;
        },
        { timeoutMs: 60_000, what: 'the replica caught up' },
      );
      if (onReplica.sys.readPool?.state.target !== 'replica') throw new Error(`reads not on the replica: ${onReplica.sys.readPool?.state.fallback_reason}`);
      const headers = { authorization: `Bearer ${TOKEN}` };
      // The servers' background (two systems' projection polls, the WAL sender and receiver), measured idle and subtracted below.
      const idle = { primary: serverCpuSeconds(join(dir, 'primary', 'pg')), standby: serverCpuSeconds(join(dir, 'standby', 'pg')), at: Date.now() };
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      const idleSeconds = (Date.now() - idle.at) / 1000;
      const background = {
        primary: (serverCpuSeconds(join(dir, 'primary', 'pg')) - idle.primary) / idleSeconds,
        standby: (serverCpuSeconds(join(dir, 'standby', 'pg')) - idle.standby) / idleSeconds,
      };
      /** The replica-mode server's reads by where they went (`dn42_db_reads_total`). */
      const readsOn = async (target: 'replica' | 'primary') => {
        const metric = await onReplica.sys.context.metrics.registry.getSingleMetric('dn42_db_reads_total')!.get();
        return metric.values.find((v) => v.labels.target === target)?.value ?? 0;
      };
      for (const view of VIEWS) {
        const fellBack = await readsOn('primary');
        const timings: Record<'primary' | 'replica', Timing[]> = { primary: [], replica: [] };
        const cpu = { primary: { onPrimary: 0, onStandby: 0 }, replica: { onPrimary: 0, onStandby: 0 } };
        for (let r = 0; r < rounds; r++) {
          for (const [mode, server] of [
            ['primary', onPrimary],
            ['replica', onReplica],
          ] as const) {
            const p0 = serverCpuSeconds(join(dir, 'primary', 'pg'));
            const s0 = serverCpuSeconds(join(dir, 'standby', 'pg'));
            const t0 = Date.now();
            timings[mode].push(await hammer(`${server.app.url}/control/v1${view}`, requests, 8, headers));
            const seconds = (Date.now() - t0) / 1000;
            cpu[mode].onPrimary += Math.max(0, serverCpuSeconds(join(dir, 'primary', 'pg')) - p0 - background.primary * seconds);
            cpu[mode].onStandby += Math.max(0, serverCpuSeconds(join(dir, 'standby', 'pg')) - s0 - background.standby * seconds);
          }
        }
        const total = requests * rounds;
        const p = combined(timings.primary);
        const s = combined(timings.replica);
        const ms = (seconds: number) => round((seconds * 1000) / total, 3);
        report({
          bench: 'replica-reads',
          view,
          nodes,
          requests: total,
          primary_per_s: round(p.perSecond),
          replica_per_s: round(s.perSecond),
          replica_vs_primary: ratio(s.perSecond, p.perSecond),
          primary_p50_ms: round(p.p50),
          primary_p99_ms: round(p.p99),
          replica_p50_ms: round(s.p50),
          replica_p99_ms: round(s.p99),
          // PostgreSQL CPU per request, the idle background subtracted: all on the primary without a replica; with one, what stays on the primary and what the standby does.
          pg_background_cpu_ms_per_s_primary: round(background.primary * 1000),
          pg_background_cpu_ms_per_s_standby: round(background.standby * 1000),
          pg_cpu_ms_per_request_primary_mode: ms(cpu.primary.onPrimary),
          pg_cpu_ms_per_request_replica_mode_on_primary: ms(cpu.replica.onPrimary),
          pg_cpu_ms_per_request_replica_mode_on_standby: ms(cpu.replica.onStandby),
          primary_load_freed: cpu.primary.onPrimary > 0 ? round(1 - cpu.replica.onPrimary / cpu.primary.onPrimary, 3) : null,
          reads_on_replica: onReplica.sys.readPool?.state.target === 'replica',
          replica_mode_reads_on_primary: (await readsOn('primary')) - fellBack,
          loadavg_1m: round(loadavg()[0], 2),
        });
      }
    } finally {
      for (const s of servers) {
        await s.app.close();
        await s.sys.close();
      }
      await admin.end();
      await standby.stop();
      await primary.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
