// Telemetry ingest at fleet size: N agents (default 1,000) report to one control
// process over the real HTTP endpoints with their own agent Bearer tokens, at the
// agents' real intervals: runtime snapshot every 60 s, WireGuard traffic every 30 s,
// prefix flaps every 60 s, a routing table of ~1,500 routes every 5 min.
//
// Two phases after an untimed warm-up (one snapshot, traffic sample and flap report
// per agent, so the first-sighting transitions and latest-value rows exist):
// - replay: BENCH_TELEMETRY_MINUTES (default 5, one routing-table cycle) simulated
//   minutes of the fleet's schedule sent as fast as the server takes them over
//   BENCH_TELEMETRY_CONCURRENCY (default 32) keep-alive connections. The sustainable
//   rate over the required rate is the headroom; CPU per request (server process
//   and its PostgreSQL backends) gives the cores the required rate needs, whatever
//   else runs on the machine. Table and index sizes
//   (pg_total_relation_size) before and after give the database growth per day.
// - window: BENCH_TELEMETRY_WINDOW_S (default 30) seconds of real time at the real
//   rate (each request sent at its scheduled instant, open loop): answer latency
//   p50/p99 per kind, and the server process's CPU (process.cpuUsage) as a share of
//   one core.
//
// The agents run in a child process (this file, forked with
// BENCH_TELEMETRY_ROLE=agents), so the server's CPU is measured without theirs.
import express from 'express';
import pg from 'pg';
import http from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { newAgentToken } from '../commands/agent-tokens.js';
import { handleCommand } from '../commands/handle.js';
import { startTelemetryJob } from '../commands/telemetry.js';
import { agentTokenDecider, agentTokenStream } from '../domain/agent/agent-token.js';
import { createControlApp } from '../http/control/app.js';
import { FLAP_RATE_RETAINED_TABLES } from '../infra/telemetry/flap-rate.js';
import { LATEST_VALUE_TABLES } from '../infra/telemetry/retention.js';
import { ROUTE_COUNT_RETAINED_TABLES } from '../infra/telemetry/route-counts.js';
import { SERIES_RETAINED_TABLES } from '../infra/telemetry/series.js';
import { RETAINED_TABLES } from '../infra/telemetry/store.js';
import { createPool } from '../infra/db/pool.js';
import { createTestSystem, startApp } from '../spec/support/system.js';
import { envInt, mb, percentile, progress, report, round, type Benchmark, ChildPeer } from './support.js';

const TOKEN = 'bench-admin-token-0123456789abcdef';

type Kind = 'snapshot' | 'traffic' | 'flaps' | 'routing';
const PATH: Record<Kind, string> = {
  snapshot: '/control/v1/agent/runtime-snapshot',
  traffic: '/control/v1/agent/wireguard-traffic',
  flaps: '/control/v1/agent/prefix-flaps',
  routing: '/control/v1/agent/routing-table',
};
/** Seconds between two reports of one agent (the agent's real timers). */
const INTERVAL_S: Record<Kind, number> = { snapshot: 60, traffic: 30, flaps: 60, routing: 300 };
const KINDS = Object.keys(PATH) as Kind[];
/** The simulated instant of a request (epoch ms): the server's clock follows it, so samples are stamped in simulated time. */
const SIM_TIME_HEADER = 'x-bench-simulated-time';
/** Start of the simulated schedule: a 5-minute bucket start, like the archives' buckets. */
const SIM_START = Date.parse('2026-11-01T12:00:00Z');

// ---------------------------------------------------------------- the agents' side

/** One agent's reports, shaped like a mid-size dn42 node: 12 WireGuard peers, 16 BGP sessions, 20 flap entries, 1,500 routes. */
const PEERS = 12;
const SESSIONS = 16;
const FLAP_ENTRIES = 20;
const ROUTES = 1500;
/** Chance that a snapshot finds one BGP session in another state than the previous one. */
const FLAP_CHANCE = 0.02;

const key = (i: number, j: number) =>
  `${(i * 7919 + j * 104729).toString(36).padStart(8, 'k').slice(0, 8).repeat(6).slice(0, 42)}A=`.replace(/[^A-Za-z0-9+/=]/g, 'x');

/** A deterministic pseudo-random number in [0, 1) from two integers. */
function noise(a: number, b: number): number {
  let x = (a * 374761393 + b * 668265263) >>> 0;
  x = Math.imul(x ^ (x >>> 13), 1274126177) >>> 0;
  return ((x ^ (x >>> 16)) >>> 0) / 4294967296;
}

class Agent {
  readonly sessions: string[] = Array.from({ length: SESSIONS }, () => 'established');
  private readonly routesJson: string;
  private bytes = 1_000_000;

  constructor(
    readonly index: number,
    readonly nodeId: string,
    readonly token: string,
  ) {
    const routes = Array.from({ length: ROUTES }, (_, r) => {
      const v6 = r % 3 === 0;
      const prefix = v6 ? `fd${(r % 250).toString(16).padStart(2, '0')}:${(r * 13).toString(16)}::/48` : `172.2${r % 4}.${(r >> 2) & 255}.${(r * 16) & 255}/28`;
      const path = [4242420000 + (r % 900), 4242420000 + ((r * 7) % 900), 4242420000 + ((r * 13) % 900)];
      return { prefix, protocol: `dn42_peer${r % PEERS}`, origin_asn: path[2], as_path: path, rpki: r % 10 === 0 ? 'not_found' : 'valid', local: r < 4 };
    });
    this.routesJson = JSON.stringify(routes);
  }

  body(kind: Kind, simMinute: number, at: string): string {
    const node_id = this.nodeId;
    this.bytes += 50_000 + this.index;
    switch (kind) {
      case 'snapshot': {
        // Now and then one session changes state (a flap): a transition to record.
        if (noise(this.index, simMinute) < FLAP_CHANCE) {
          const s = Math.floor(noise(simMinute, this.index) * SESSIONS);
          this.sessions[s] = this.sessions[s] === 'established' ? 'active' : 'established';
        }
        return JSON.stringify({
          node_id,
          generation: 3,
          captured_at: at,
          containers: ['bird', 'wireguard', 'agent'].map((name) => ({ name, state: 'running', image: `${name}:1.0` })),
          interfaces: [
            { name: 'eth0', up: true, mtu: 1500, rx_bytes: this.bytes * 3, tx_bytes: this.bytes * 2 },
            { name: 'lo', up: true, mtu: 65536, rx_bytes: 1000, tx_bytes: 1000 },
            ...Array.from({ length: PEERS }, (_, p) => ({ name: `dn42_p${p}`, up: true, mtu: 1420, rx_bytes: this.bytes + p, tx_bytes: this.bytes * 2 + p })),
          ],
          wireguard_interfaces: Array.from({ length: PEERS }, (_, p) => ({
            name: `dn42_p${p}`,
            public_key: key(this.index, 0),
            listen_port: 51800 + p,
            peers: [
              {
                public_key: key(this.index, p + 1),
                endpoint: `198.51.100.${p + 1}:51820`,
                latest_handshake_at: at,
                rx_bytes: this.bytes + p,
                tx_bytes: this.bytes + 2 * p,
              },
            ],
          })),
          bgp_protocols: this.sessions.map((state, s) => ({
            name: `dn42_p${s % PEERS}_v${s < PEERS ? 6 : 4}`,
            state,
            since: '2026-11-01T10:00:00Z',
            remote_asn: 4242420000 + s,
            routes_imported: state === 'established' ? 90 : 0,
            routes_exported: state === 'established' ? 1400 : 0,
          })),
          self_metrics: {
            cpu: 1.5,
            rss: 60_000_000,
            total_failures: 0,
            log_warning_count: 1,
            log_error_count: 0,
            last_error_at: null,
            last_error_message: null,
            last_routing_collect_seconds: 0.4,
            last_reresolve_seconds: 0.1,
          },
        });
      }
      case 'traffic':
        return JSON.stringify({
          node_id,
          captured_at: at,
          peers: Array.from({ length: PEERS }, (_, p) => ({
            interface: `dn42_p${p}`,
            public_key: key(this.index, p + 1),
            rx_bytes: this.bytes + p,
            tx_bytes: this.bytes * 2 + p,
          })),
        });
      case 'flaps':
        return JSON.stringify({
          node_id,
          captured_at: at,
          feed_state: 'established',
          entries: Array.from({ length: FLAP_ENTRIES }, (_, e) => ({
            prefix: `172.2${e % 4}.${(e * 5 + simMinute) & 255}.0/24`,
            peer_asn: 4242420000 + (e % PEERS),
            origin_asn: 4242420100 + e,
            score: round(1 + noise(e, simMinute) * 5, 3),
            flaps: 1 + e,
            last_flap_at: at,
          })),
        });
      case 'routing':
        return `{"node_id":${JSON.stringify(node_id)},"captured_at":${JSON.stringify(at)},"rpki_observed":true,"routes":${this.routesJson}}`;
    }
  }
}

interface Send {
  /** Simulated milliseconds since the start of the schedule. */
  at: number;
  agent: number;
  kind: Kind;
}

/**
 * The fleet's reports between simulated times `from` and `to` (ms), in time order.
 * Agent i's timers are spread evenly over each interval (agents start at different
 * moments), so every kind arrives at its real average rate.
 */
function schedule(n: number, from: number, to: number): Send[] {
  const out: Send[] = [];
  for (const kind of KINDS) {
    const period = INTERVAL_S[kind] * 1000;
    for (let agent = 0; agent < n; agent++) {
      const phase = Math.floor((agent * period) / n);
      for (let t = phase + Math.ceil((from - phase) / period) * period; t < to; t += period) out.push({ at: t, agent, kind });
    }
  }
  return out.sort((a, b) => a.at - b.at || a.agent - b.agent);
}

interface Outcome {
  kind: Kind;
  ms: number;
  status: number;
}

function post(agentPool: http.Agent, url: URL, path: string, token: string, body: string, simTime: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        agent: agentPool,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          [SIM_TIME_HEADER]: String(simTime),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

type ToAgents =
  | { cmd: 'setup'; url: string; agents: { nodeId: string; token: string }[]; concurrency: number }
  | { cmd: 'warmup' }
  | { cmd: 'replay'; minutes: number; fromMinute?: number; urls?: string[]; kinds?: Kind[] }
  | { cmd: 'window'; fromMinute: number; seconds: number };
type FromAgents = { ready: true } | { done: true; wall_s: number; outcomes: Outcome[] };
type Agents = ChildPeer<ToAgents, FromAgents>;

async function runAgents(): Promise<void> {
  let agents: Agent[] = [];
  let url = new URL('http://127.0.0.1');
  /** Where each request goes: the first URL, or round robin over several (a load balancer without affinity). */
  let urls: URL[] = [url];
  let sent = 0;
  let concurrency = 32;
  let pool = new http.Agent({ keepAlive: true });
  const simStart = SIM_START;

  const sendOne = async (s: Send): Promise<Outcome> => {
    const agent = agents[s.agent];
    const body = agent.body(s.kind, Math.floor(s.at / 60_000), new Date(simStart + s.at).toISOString());
    const t0 = performance.now();
    const target = urls[sent++ % urls.length];
    const status = await post(pool, target, PATH[s.kind], agent.token, body, simStart + s.at).catch(() => 0);
    return { kind: s.kind, ms: performance.now() - t0, status };
  };

  /** As fast as the server takes them, `concurrency` requests at a time, in schedule order. */
  const closedLoop = async (sends: Send[]): Promise<Outcome[]> => {
    const outcomes: Outcome[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < sends.length) outcomes.push(await sendOne(sends[next++]));
      }),
    );
    return outcomes;
  };

  /** Each request at its scheduled instant (simulated time = real time from the first), whatever is still open. */
  const openLoop = async (sends: Send[]): Promise<Outcome[]> => {
    const t0 = performance.now();
    const base = sends[0]?.at ?? 0;
    const pending: Promise<Outcome>[] = [];
    for (const s of sends) {
      const wait = s.at - base - (performance.now() - t0);
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      pending.push(sendOne(s));
    }
    return Promise.all(pending);
  };

  process.on('message', async (m: ToAgents) => {
    const reply = (msg: FromAgents) => process.send!(msg);
    if (m.cmd === 'setup') {
      url = new URL(m.url);
      urls = [url];
      concurrency = m.concurrency;
      pool = new http.Agent({ keepAlive: true, maxSockets: 4096 });
      agents = m.agents.map((a, i) => new Agent(i, a.nodeId, a.token));
      reply({ ready: true });
      return;
    }
    const t0 = performance.now();
    let outcomes: Outcome[];
    if (m.cmd === 'warmup') {
      // One of each frequent kind per agent, at simulated time -60 s (before the replay).
      const sends = agents.flatMap((_, agent) => (['snapshot', 'traffic', 'flaps'] as Kind[]).map((kind) => ({ at: -60_000 + agent, agent, kind })));
      outcomes = await closedLoop(sends);
    } else if (m.cmd === 'replay') {
      urls = (m.urls ?? [url.href]).map((u) => new URL(u));
      const from = (m.fromMinute ?? 0) * 60_000;
      const kinds = m.kinds ?? KINDS;
      outcomes = await closedLoop(schedule(agents.length, from, from + m.minutes * 60_000).filter((x) => kinds.includes(x.kind)));
      urls = [url];
    } else {
      const from = m.fromMinute * 60_000;
      outcomes = await openLoop(schedule(agents.length, from, from + m.seconds * 1000));
    }
    reply({ done: true, wall_s: (performance.now() - t0) / 1000, outcomes });
  });
  process.send!({ ready: true });
}

// ---------------------------------------------------------------- the server's side

/** Latency figures per kind and over all, and the answers that were not 200. */
function latencies(outcomes: readonly Outcome[]) {
  const figures = (of: readonly Outcome[]) => {
    const ms = of.map((o) => o.ms).sort((a, b) => a - b);
    return { count: ms.length, p50_ms: round(percentile(ms, 50)), p99_ms: round(percentile(ms, 99)), max_ms: round(ms.at(-1) ?? NaN) };
  };
  const failed = outcomes.filter((o) => o.status !== 200);
  return {
    all: figures(outcomes),
    ...Object.fromEntries(KINDS.map((k) => [k, figures(outcomes.filter((o) => o.kind === k))])),
    not_200: failed.length,
    not_200_statuses: [...new Set(failed.map((o) => o.status))],
  };
}

/** Total size (table, TOAST and indexes) of every table of the public schema, in bytes; a partitioned table's partitions counted as the table. */
async function tableSizes(pool: import('pg').Pool): Promise<Map<string, number>> {
  const { rows } = await pool.query(
    `SELECT coalesce(p.relname, c.relname) AS name, sum(pg_total_relation_size(c.oid))::bigint AS bytes
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_inherits i ON i.inhrelid = c.oid LEFT JOIN pg_class p ON p.oid = i.inhparent AND p.relkind = 'p'
     WHERE c.relkind = 'r' AND n.nspname = 'public' GROUP BY 1`,
  );
  return new Map(rows.map((r: { name: string; bytes: string }) => [r.name, Number(r.bytes)]));
}

/** Exact row counts of the given tables. */
async function rowCounts(pool: import('pg').Pool, tables: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const table of tables) out.set(table, Number((await pool.query(`SELECT count(*) AS n FROM "${table}"`)).rows[0].n));
  return out;
}

/** Archives keeping one row per node (and interface) per 5-minute bucket (infra/telemetry/migrations/0006). */
const ARCHIVE_TABLES = new Set(['interface_traffic_samples', 'self_metrics_samples']);

/** Rollups keeping one row per node (and interface) per bucket of each width (`width_s`): each width has its own cadence. */
const ROLLUP_TABLES = new Set(['interface_traffic_rollups', 'node_series_rollups']);

/**
 * Tables whose size is bounded by the fleet, not by time, so they are not
 * extrapolated: telemetry's latest-value tables (each report replaces a node's
 * rows; `routing_routes` alone is most of a day's writes), and the read models
 * and bookkeeping the reports touch that keep one row per node, session or
 * stream, or prune themselves to a bound (flap alerts, session flap transitions).
 */
const BOUNDED_TABLES = new Set([
  ...LATEST_VALUE_TABLES,
  'node_status_current',
  'session_flaps',
  'session_flap_transitions',
  'flap_alerts',
  'flap_alerts_stream',
  'flap_alert_scores',
  'agent_connections',
  'streams',
  'projection_checkpoints',
]);

/** Tables the retention job keeps 60 days of: growth that stops at 60 days. */
const RETAINED = new Set(
  [...RETAINED_TABLES, ...SERIES_RETAINED_TABLES, ...FLAP_RATE_RETAINED_TABLES, ...ROUTE_COUNT_RETAINED_TABLES]
    .map((t) => t.table)
    .filter((t) => !BOUNDED_TABLES.has(t)),
);

/** Rows added per width of a rollup table during the replay. */
async function rollupRowsByWidth(pool: import('pg').Pool, table: string): Promise<Map<number, number>> {
  const { rows } = await pool.query(`SELECT width_s, count(*)::bigint AS n FROM "${table}" GROUP BY width_s`);
  return new Map(rows.map((r: { width_s: number; n: string }) => [r.width_s, Number(r.n)]));
}

/**
 * CPU time of this database's PostgreSQL backends (the server's pool connections),
 * read from /proc/<pid>/stat every `intervalMs` (PostgreSQL runs on this machine).
 * A backend's CPU counts from its first sighting to its last; one that exits between
 * two samples loses at most one interval. Null when /proc cannot be read.
 */
class BackendCpu {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;
  private readable = true;

  constructor(
    private readonly pool: import('pg').Pool,
    intervalMs = 500,
  ) {
    this.timer = setInterval(() => void this.sample(), intervalMs);
  }

  private async sample(): Promise<void> {
    const { rows } = await this.pool
      .query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
      .catch(() => ({ rows: [] as { pid: number }[] }));
    const fs = await import('node:fs/promises');
    for (const { pid } of rows) {
      const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
      if (stat === undefined) {
        this.readable = this.readable && this.last.size > 0;
        continue;
      }
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      if (!this.first.has(pid)) this.first.set(pid, ticks);
      this.last.set(pid, ticks);
    }
  }

  /** Seconds of CPU used by the backends since the start. */
  async stop(): Promise<number | null> {
    clearInterval(this.timer);
    await this.sample();
    if (!this.readable) return null;
    let ticks = 0;
    for (const [pid, end] of this.last) ticks += end - (this.first.get(pid) ?? end);
    return ticks / 100;
  }
}

/**
 * Statements sent to PostgreSQL by this process (every pool's clients): counted
 * around each replay, so a report's round trips are a figure that does not depend
 * on the machine's load. The agents run in another process.
 */
let statements = 0;
const clientQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  statements++;
  return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof clientQuery;

/** One closed-loop replay: wall time, rate, CPU per request of this process and of the database's backends, latency. */
async function measuredReplay(agents: Agents, pool: import('pg').Pool, message: ToAgents & { cmd: 'replay' }, drain: () => Promise<void>) {
  const cpu = process.cpuUsage();
  const backends = new BackendCpu(pool);
  const statementsBefore = statements;
  const run = await agents.ask<{ done: true; wall_s: number; outcomes: Outcome[] }>(message);
  await drain();
  const used = process.cpuUsage(cpu);
  const pgSeconds = await backends.stop();
  const n = run.outcomes.length;
  return {
    requests: n,
    wall_s: round(run.wall_s),
    sustained_per_s: round(n / run.wall_s),
    server_cpu_ms_per_request: round(((used.user + used.system) / 1e3 / n) * 1, 3),
    postgres_cpu_ms_per_request: pgSeconds === null ? null : round((pgSeconds * 1000) / n, 3),
    statements_per_request: round((statements - statementsBefore) / n, 2),
    latency: latencies(run.outcomes),
  };
}

async function runServer(): Promise<void> {
  const n = envInt('BENCH_TELEMETRY_AGENTS', 1000);
  const minutes = envInt('BENCH_TELEMETRY_MINUTES', 1);
  const windowSeconds = envInt('BENCH_TELEMETRY_WINDOW_S', 30);
  const concurrency = envInt('BENCH_TELEMETRY_CONCURRENCY', 32);
  const sys = await createTestSystem({ env: { ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent' } });
  // The clock follows the simulated time of the requests (the latest seen), so samples
  // are stamped, bucketed and judged stale as at the fleet's real pace.
  let simulated = SIM_START - 120_000;
  const context = { ...sys.context, now: () => new Date(simulated) };
  const outer = express();
  outer.use((req, _res, next) => {
    const t = Number(req.headers[SIM_TIME_HEADER]);
    if (t > simulated) simulated = t;
    next();
  });
  outer.use(createControlApp(context));
  const control = await startApp(outer);
  const job = startTelemetryJob(context, context.now);
  // A second control instance on the same database, its clock following the same simulated time.
  const secondSys = await createTestSystem({ env: { ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent' }, database: sys.db });
  const secondOuter = express();
  secondOuter.use((req, _res, next) => {
    const t = Number(req.headers[SIM_TIME_HEADER]);
    if (t > simulated) simulated = t;
    next();
  });
  secondOuter.use(createControlApp({ ...secondSys.context, now: () => new Date(simulated) }));
  const second = await startApp(secondOuter);
  const agents = new ChildPeer<ToAgents, FromAgents>('agents process', import.meta.url, 'BENCH_TELEMETRY_ROLE', 'agents');
  try {
    await agents.next<{ ready: true }>();
    progress(`telemetry-ingest: issuing ${n} agent tokens`);
    // Tokens straight through the token decider (what the admin endpoint appends, without
    // its node lookup): the report endpoints check only the token and its node id, and a
    // fleet of 1,000 node records would take minutes to create on 2 shared cores.
    const ids = Array.from({ length: n }, (_, i) => `tn${String(i).padStart(4, '0')}`);
    const issued: { nodeId: string; token: string }[] = [];
    for (let i = 0; i < n; i += 50) {
      issued.push(
        ...(await Promise.all(
          ids.slice(i, i + 50).map(async (nodeId) => {
            const { secret, parts } = newAgentToken({ now: new Date() });
            await handleCommand(
              sys.store,
              agentTokenStream(parts.token_id),
              agentTokenDecider,
              { type: 'IssueAgentToken', node_id: nodeId, ...parts },
              { actor: 'bench' },
            );
            return { nodeId, token: `${parts.token_id}.${secret}` };
          }),
        )),
      );
    }
    await agents.ask({ cmd: 'setup', url: control.url, agents: issued, concurrency });

    progress('telemetry-ingest: warm-up (one snapshot, traffic sample and flap report per agent)');
    const warm = await agents.ask<{ done: true; wall_s: number; outcomes: Outcome[] }>({ cmd: 'warmup' });
    const warmFigures = latencies(warm.outcomes);
    if (warmFigures.not_200 > 0) throw new Error(`warm-up: ${warmFigures.not_200} answers were not 200 (${warmFigures.not_200_statuses.join(', ')})`);
    await sys.context.background.drain();

    progress(`telemetry-ingest: replay of ${minutes} simulated minutes as fast as it goes (${concurrency} connections)`);
    await sys.pool.query('VACUUM ANALYZE');
    const sizesBefore = await tableSizes(sys.pool);
    const rowsBefore = await rowCounts(sys.pool, [...sizesBefore.keys()]);
    const rollupsBefore = new Map(await Promise.all([...ROLLUP_TABLES].map(async (t) => [t, await rollupRowsByWidth(sys.pool, t)] as const)));
    const cpuReplay = process.cpuUsage();
    const pgReplay = new BackendCpu(sys.pool);
    const statementsReplay = statements;
    const replay = await agents.ask<{ done: true; wall_s: number; outcomes: Outcome[] }>({ cmd: 'replay', minutes });
    await sys.context.background.drain();
    const replayCpu = process.cpuUsage(cpuReplay);
    const replayStatements = statements - statementsReplay;
    const replayPgSeconds = await pgReplay.stop();
    const sizesAfter = await tableSizes(sys.pool);
    const rowsAfter = await rowCounts(sys.pool, [...sizesAfter.keys()]);
    const rollupsAfter = new Map(await Promise.all([...ROLLUP_TABLES].map(async (t) => [t, await rollupRowsByWidth(sys.pool, t)] as const)));
    const required = replay.outcomes.length / (minutes * 60);
    const sustained = replay.outcomes.length / replay.wall_s;

    // Growth per day of each table that grows with time: bytes per row over the replay
    // (size and row count before and after) times rows per day. A replay of M simulated
    // minutes adds M/1440 of a day's rows, except to the 5-minute archives, whose rows
    // cover ceil(M/5) buckets (the schedule starts at a bucket start), and to the rollups,
    // whose rows of width w cover ceil(M*60/w) buckets of the 86,400/w of a day.
    // Bytes per row include the dead versions the replay's updates left (upserted rollups):
    // an upper bound; `npm run bench -- storage` measures a whole day with vacuum.
    const rowsPerDay = (table: string, added: number) => {
      if (ARCHIVE_TABLES.has(table)) return (added * 288) / Math.ceil(minutes / 5);
      if (ROLLUP_TABLES.has(table)) {
        const before = rollupsBefore.get(table)!;
        return [...rollupsAfter.get(table)!].reduce((sum, [w, n]) => sum + ((n - (before.get(w) ?? 0)) * (86_400 / w)) / Math.ceil((minutes * 60) / w), 0);
      }
      return (added * 1440) / minutes;
    };
    const changed = [...sizesAfter.keys()].filter((table) => (sizesAfter.get(table) ?? 0) !== (sizesBefore.get(table) ?? 0));
    const growing = changed
      .filter((table) => !BOUNDED_TABLES.has(table))
      .map((table) => {
        const addedRows = (rowsAfter.get(table) ?? 0) - (rowsBefore.get(table) ?? 0);
        const addedBytes = (sizesAfter.get(table) ?? 0) - (sizesBefore.get(table) ?? 0);
        const bytesPerRow = addedRows > 0 ? addedBytes / addedRows : 0;
        return { table, bytesPerRow, perDay: bytesPerRow * rowsPerDay(table, addedRows) };
      })
      .sort((a, b) => b.perDay - a.perDay);
    const growingPerDay = growing.reduce((sum, g) => sum + g.perDay, 0);
    // Growth that retention stops at 60 days, and growth nothing stops (the event log).
    const retainedPerDay = growing.filter((g) => RETAINED.has(g.table)).reduce((sum, g) => sum + g.perDay, 0);
    const bounded = [...sizesAfter].filter(([table]) => BOUNDED_TABLES.has(table)).sort((a, b) => b[1] - a[1]);
    const boundedChange = changed
      .filter((table) => BOUNDED_TABLES.has(table))
      .map((table): [string, number] => [table, (sizesAfter.get(table) ?? 0) - (sizesBefore.get(table) ?? 0)])
      .sort((a, b) => b[1] - a[1]);

    progress(`telemetry-ingest: ${windowSeconds} s at the real rate`);
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const cpuWindow = process.cpuUsage();
    const pgWindow = new BackendCpu(sys.pool);
    const wallWindow = performance.now();
    const win = await agents.ask<{ done: true; wall_s: number; outcomes: Outcome[] }>({ cmd: 'window', fromMinute: minutes, seconds: windowSeconds });
    const windowCpu = process.cpuUsage(cpuWindow);
    const windowWall = (performance.now() - wallWindow) / 1000;
    const windowPgSeconds = await pgWindow.stop();
    loop.disable();
    await sys.context.background.drain();
    const cpuSeconds = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1e6;

    // The same replay again (later simulated minutes) over two control instances on this
    // database, each request to the next one in turn (a load balancer without affinity):
    // the CPU of both (this process) and of the database's backends, together.
    progress(`telemetry-ingest: replay of ${minutes} simulated minutes over two control instances`);
    const two = await measuredReplay(
      agents,
      sys.pool,
      { cmd: 'replay', minutes, fromMinute: minutes + Math.ceil(windowSeconds / 60) + 1, urls: [control.url, second.url] },
      async () => {
        await sys.context.background.drain();
        await secondSys.context.background.drain();
      },
    );

    // Each kind alone (later simulated minutes, one instance): where a report's cost lies.
    // The telemetry job stops first: its staleness sweep would find the simulated gaps between these phases.
    await job.stop();
    const perKind: Record<string, Omit<Awaited<ReturnType<typeof measuredReplay>>, 'latency'> & { p99_ms: number }> = {};
    let kindMinute = minutes * 2 + Math.ceil(windowSeconds / 60) + 2;
    for (const kind of KINDS) {
      progress(`telemetry-ingest: ${kind} reports alone`);
      const { latency, ...figures } = await measuredReplay(
        agents,
        sys.pool,
        { cmd: 'replay', minutes: kind === 'routing' ? 5 : 1, fromMinute: kindMinute, kinds: [kind] },
        () => sys.context.background.drain(),
      );
      kindMinute += 5;
      perKind[kind] = { ...figures, p99_ms: latency.all.p99_ms };
    }
    // The routing tables once more: the pass above stored most agents' first table (1,500 rows
    // inserted each); now every agent's previous table is stored, by this instance, as in a
    // fleet's steady state.
    progress('telemetry-ingest: routing reports alone, every agent with a stored table');
    const { latency: again, ...routingAgain } = await measuredReplay(
      agents,
      sys.pool,
      { cmd: 'replay', minutes: 5, fromMinute: kindMinute, kinds: ['routing'] },
      () => sys.context.background.drain(),
    );
    perKind.routing_again = { ...routingAgain, p99_ms: again.all.p99_ms };

    // Baseline in the same run: bare Express answering the same bodies (JSON parsed, one
    // INSERT of the body) on its own pool of the same size against this database.
    progress(`telemetry-ingest: the same ${minutes} minutes against bare Express (parse, one INSERT)`);
    await sys.pool.query('CREATE TABLE bench_bodies (id bigserial PRIMARY KEY, path text NOT NULL, body jsonb NOT NULL)');
    const barePool = createPool(sys.db.url, 30);
    const bareErrors: string[] = [];
    const bare = express();
    bare.use(express.json({ limit: '8mb' }));
    bare.post('/control/v1/agent/:kind', async (req, res, next) => {
      try {
        await barePool.query('INSERT INTO bench_bodies (path, body) VALUES ($1, $2)', [req.path, JSON.stringify(req.body)]);
        res.json({ accepted: true });
      } catch (err) {
        bareErrors.push(String(err));
        next(err);
      }
    });
    const bareApp = await startApp(bare);
    let baseline: Awaited<ReturnType<typeof measuredReplay>>;
    try {
      baseline = await measuredReplay(agents, sys.pool, { cmd: 'replay', minutes, urls: [bareApp.url] }, async () => {});
    } finally {
      await bareApp.close();
      await barePool.end();
    }
    const cpuShare = (c: NodeJS.CpuUsage, seconds: number) => round(cpuSeconds(c) / seconds, 3);
    // CPU per request (the server process and its PostgreSQL backends), measured over the
    // replay: unlike wall time it does not depend on what else runs on the machine. The
    // share of one core the fleet's real rate needs follows from it.
    const serverMsPerRequest = (cpuSeconds(replayCpu) * 1000) / replay.outcomes.length;
    const pgMsPerRequest = replayPgSeconds === null ? null : (replayPgSeconds * 1000) / replay.outcomes.length;

    const replayFigures = latencies(replay.outcomes);
    const windowFigures = latencies(win.outcomes);
    const load = (await import('node:os')).loadavg().map((l) => round(l, 1));
    report({
      bench: 'telemetry-ingest',
      agents: n,
      load_average: load,
      replay: {
        simulated_minutes: minutes,
        requests: replay.outcomes.length,
        concurrency,
        wall_s: round(replay.wall_s),
        required_per_s: round(required),
        sustained_per_s: round(sustained),
        headroom: round(sustained / required, 2),
        server_cpu_share_of_one_core: cpuShare(replayCpu, replay.wall_s),
        server_cpu_ms_per_request: round(serverMsPerRequest),
        postgres_cpu_ms_per_request: pgMsPerRequest === null ? null : round(pgMsPerRequest),
        statements_per_request: round(replayStatements / replay.outcomes.length, 2),
        cores_needed_at_required_rate: {
          server: round((serverMsPerRequest * required) / 1000, 3),
          postgres: pgMsPerRequest === null ? null : round((pgMsPerRequest * required) / 1000, 3),
        },
        latency_saturated: replayFigures,
      },
      window: {
        seconds: windowSeconds,
        requests: win.outcomes.length,
        offered_per_s: round(win.outcomes.length / windowSeconds),
        latency: windowFigures,
        wall_s: round(windowWall),
        server_cpu_share_of_one_core: cpuShare(windowCpu, windowWall),
        postgres_cpu_share_of_one_core: windowPgSeconds === null ? null : round(windowPgSeconds / windowWall, 3),
        event_loop_delay_p99_ms: round(loop.percentile(99) / 1e6),
      },
      two_instances: two,
      per_kind: perKind,
      express_baseline: {
        ...baseline,
        errors: [...new Set(bareErrors)].slice(0, 3),
        ours_over_baseline: {
          server_cpu: round(serverMsPerRequest / baseline.server_cpu_ms_per_request, 2),
          postgres_cpu:
            pgMsPerRequest === null || baseline.postgres_cpu_ms_per_request === null ? null : round(pgMsPerRequest / baseline.postgres_cpu_ms_per_request, 2),
        },
      },
      database: {
        growth_per_day_mb: mb(growingPerDay),
        growth_per_day_retained_mb: mb(retainedPerDay),
        growth_per_day_unbounded_mb: mb(growingPerDay - retainedPerDay),
        retained_60_days_gb: round((retainedPerDay * 60) / 1024 ** 3, 1),
        growing_tables_per_day_mb: Object.fromEntries(growing.slice(0, 12).map((g) => [g.table, mb(g.perDay)])),
        bytes_per_row: Object.fromEntries(growing.slice(0, 12).map((g) => [g.table, Math.round(g.bytesPerRow)])),
        bounded_tables_mb: Object.fromEntries(bounded.slice(0, 12).map(([table, bytes]) => [table, mb(bytes)])),
        bounded_tables_change_during_replay_mb: Object.fromEntries(boundedChange.slice(0, 12).map(([table, bytes]) => [table, mb(bytes)])),
      },
      ok: replayFigures.not_200 === 0 && windowFigures.not_200 === 0 && two.latency.not_200 === 0 && baseline.latency.not_200 === 0,
    });
  } finally {
    agents.stop();
    await job.stop();
    await second.close();
    await secondSys.close();
    await control.close();
    await sys.close();
  }
}

export const telemetryIngestBench: Benchmark = {
  name: 'telemetry-ingest',
  description: "1,000 agents' reports at their real intervals over HTTP: sustainable vs required rate, p99, CPU share, database growth per day",
  run: runServer,
};

if (process.env.BENCH_TELEMETRY_ROLE === 'agents') void runAgents();
