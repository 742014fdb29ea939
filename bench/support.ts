// Shared helpers of the benchmarks: registration type, a fresh migrated database
// per benchmark, timing, percentiles, memory sampling, HTTP load and the one-line JSON output.
import { fork, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { migrate, type MigrationSet } from '../infra/db/migrate.js';
import { createPool } from '../infra/db/pool.js';
import { eventStoreMigrations, PgEventStore } from '../infra/eventstore/postgres/store.js';
import { createLogger, type Logger } from '../infra/logger.js';
import { checkpointMigrations } from '../projections/runtime/runtime.js';
import { createTestDatabase, type TestDatabase } from '../spec/support/database.js';

/** A benchmark: `run` prints its result lines with `report`. Registered in bench/run.ts. */
export interface Benchmark {
  readonly name: string;
  readonly description: string;
  run(): Promise<void>;
}

/** One result line on stdout; progress and diagnostics go to stderr. */
export function report(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

export function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

export const silentLog: Logger = createLogger('silent');

/** A positive integer from the environment, else the default. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw.replace(/_/g, ''));
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
}

export interface BenchDatabase {
  db: TestDatabase;
  pool: pg.Pool;
  store: PgEventStore;
}

/**
 * Runs `work` against a database of its own (spec/support/database.ts picks the
 * server), migrated like a real system: event store, projection checkpoints and
 * any extra sets. Dropped afterwards, whatever happens.
 */
export async function withBenchDatabase<T>(
  options: { poolSize?: number; migrations?: readonly MigrationSet[] },
  work: (ctx: BenchDatabase) => Promise<T>,
): Promise<T> {
  const db = await createTestDatabase();
  const pool = createPool(db.url, options.poolSize ?? 10);
  try {
    await migrate(pool, [eventStoreMigrations, checkpointMigrations, ...(options.migrations ?? [])]);
    const store = new PgEventStore({ pool, log: silentLog });
    return await work({ db, pool, store });
  } finally {
    await pool.end().catch(() => {});
    await db.drop();
  }
}

export const now = (): number => performance.now();

/** Nearest-rank percentile of values already sorted ascending. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Rounds for output: 3 significant decimals below 10, fewer above. */
export function round(value: number, digits?: number): number {
  if (!Number.isFinite(value)) return value;
  const d = digits ?? (Math.abs(value) >= 1000 ? 0 : Math.abs(value) >= 10 ? 1 : 3);
  const f = 10 ** d;
  return Math.round(value * f) / f;
}

export const mb = (bytes: number): number => round(bytes / (1024 * 1024), 1);

/** Full collection when run with --expose-gc (npm run bench does); otherwise a no-op. */
export function collectGarbage(): void {
  globalThis.gc?.();
  globalThis.gc?.();
}

export interface MemoryFigures {
  /** Highest resident set size seen during the phase. */
  peak_rss_mb: number;
  /** Highest V8 heap in use seen during the phase. */
  peak_heap_mb: number;
  /** Heap in use after the phase minus before it, both after a full GC: what the phase kept. */
  heap_delta_mb: number;
  /** Highest heap in use during the phase minus the heap before it: the phase's working set. */
  heap_growth_mb: number;
}

/**
 * Samples process.memoryUsage() every few milliseconds while a phase runs (the
 * samples are taken between I/O callbacks, so a long synchronous stretch is seen
 * at its end). Call `sample()` by hand at interesting points too.
 */
export class MemorySampler {
  private readonly timer: NodeJS.Timeout;
  private readonly baseHeap: number;
  private peakRss = 0;
  private peakHeap = 0;

  constructor(intervalMs = 10) {
    collectGarbage();
    const start = process.memoryUsage();
    this.baseHeap = start.heapUsed;
    this.peakRss = start.rss;
    this.peakHeap = start.heapUsed;
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  sample(): void {
    const m = process.memoryUsage();
    if (m.rss > this.peakRss) this.peakRss = m.rss;
    if (m.heapUsed > this.peakHeap) this.peakHeap = m.heapUsed;
  }

  stop(): MemoryFigures {
    this.sample();
    clearInterval(this.timer);
    collectGarbage();
    const end = process.memoryUsage();
    return {
      peak_rss_mb: mb(this.peakRss),
      peak_heap_mb: mb(this.peakHeap),
      heap_delta_mb: mb(end.heapUsed - this.baseHeap),
      heap_growth_mb: mb(this.peakHeap - this.baseHeap),
    };
  }
}

/** Runs `phase` with wall time and memory measured. */
export async function measure<T>(phase: () => Promise<T>): Promise<{ result: T; seconds: number; memory: MemoryFigures }> {
  const sampler = new MemorySampler();
  const start = now();
  let result: T;
  try {
    result = await phase();
  } catch (err) {
    sampler.stop();
    throw err;
  }
  const seconds = (now() - start) / 1000;
  return { result, seconds, memory: sampler.stop() };
}

/**
 * Longest a single measured phase may run (BENCH_PHASE_BUDGET_S, default 150 s):
 * a phase that would take longer stops there and reports the throughput of the
 * part it did, marked `complete: false`, so a regression cannot stall the run.
 */
export function phaseBudgetSeconds(): number {
  return envInt('BENCH_PHASE_BUDGET_S', 150);
}

/** Thrown from inside a phase to stop it at its time budget. */
export class BudgetExceeded extends Error {
  constructor(readonly done: number) {
    super(`time budget exceeded after ${done} events`);
    this.name = 'BudgetExceeded';
  }
}

/** Subject throughput over baseline throughput: 1 = as fast, 0.5 = half as fast (twice the time). */
export function ratio(subjectPerSecond: number, baselinePerSecond: number): number {
  return round(subjectPerSecond / baselinePerSecond, 3);
}

/**
 * Payload of a generated event, about 200 bytes of JSON, shaped like a peering
 * update of the fleet. Deterministic in `i`. The rebuild benchmark generates the
 * same shape in SQL (see rebuild.ts).
 */
export function eventData(i: number): Record<string, unknown> {
  const hex = ((i * 2654435761) >>> 0).toString(16).padStart(8, '0');
  return {
    node: `node-${String(i % 500).padStart(4, '0')}`,
    asn: 4242420000 + (i % 10000),
    peerAsn: 4242420000 + ((i * 7) % 10000),
    endpoint: `198.51.${i % 256}.${(i >> 8) % 256}:${20000 + (i % 10000)}`,
    publicKey: `${hex.repeat(5)}abc=`,
    mtu: 1420,
    tags: ['wireguard', 'bgp'],
    note: `session ${hex} up`,
  };
}

export const EVENT_TYPES = [
  'NodeRegistered',
  'PeeringRequested',
  'PeeringApproved',
  'TunnelConfigured',
  'BgpSessionEstablished',
  'BgpSessionDropped',
  'RoaUpdated',
  'NodeHeartbeatRecorded',
] as const;

export interface Timing {
  perSecond: number;
  p50: number;
  p99: number;
  bytes: number;
  latencies: Float64Array;
}

/** GETs `url` (with `headers`) `total` times over `concurrency` keep-alive connections; answers per second and latency percentiles. */
export async function hammer(url: string, total: number, concurrency: number, headers: Record<string, string> = {}): Promise<Timing> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies = new Float64Array(total);
  let next = 0;
  let bytes = 0;
  const one = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const t0 = now();
      request(url, { agent, headers }, (res) => {
        let size = 0;
        res.on('data', (chunk: Buffer) => (size += chunk.length));
        res.on('end', () => {
          if (res.statusCode !== 200) return reject(new Error(`${url} answered ${res.statusCode}`));
          bytes = size;
          latencies[i] = now() - t0;
          resolve();
        });
      })
        .on('error', reject)
        .end();
    });
  const worker = async () => {
    while (next < total) await one(next++);
  };
  const start = now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (now() - start) / 1000;
  agent.destroy();
  latencies.sort();
  return { perSecond: total / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), bytes, latencies };
}

/** Several rounds as one: requests over the summed time, percentiles over all latencies. */
export function combined(rounds: readonly Timing[]): Timing {
  const latencies = Float64Array.from(rounds.flatMap((r) => [...r.latencies])).sort();
  const seconds = rounds.reduce((sum, r) => sum + r.latencies.length / r.perSecond, 0);
  return { perSecond: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), bytes: rounds[0].bytes, latencies };
}

/**
 * A benchmark's load-generating side in a child process of its own (the bench file
 * forked again, with `roleVariable` set to `role`), so that its CPU is not the
 * measured server's: `send` a command, `next` the child's next message.
 */
export class ChildPeer<To, From> {
  private readonly child: ChildProcess;
  private readonly inbox: From[] = [];
  private waiting: (() => void) | undefined;

  constructor(
    private readonly name: string,
    moduleUrl: string,
    roleVariable: string,
    role: string,
    /** More node options for the child (e.g. `--expose-gc`, when it measures its own memory). */
    nodeOptions: readonly string[] = [],
  ) {
    this.child = fork(new URL(moduleUrl), [], {
      execArgv: ['--import', 'tsx', '--max-old-space-size=4096', ...nodeOptions],
      env: { ...process.env, [roleVariable]: role },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child.on('message', (m) => {
      this.inbox.push(m as From);
      this.waiting?.();
    });
  }

  send(message: To): void {
    this.child.send(message as object);
  }

  /** The next message from the child. */
  next<T extends From>(timeoutMs = 120_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name}: no answer within ${timeoutMs} ms`)), timeoutMs);
      const check = () => {
        const m = this.inbox.shift();
        if (m === undefined) return;
        clearTimeout(timer);
        this.waiting = undefined;
        resolve(m as T);
      };
      this.waiting = check;
      check();
    });
  }

  /** `send`, then the next message (a long default: a replay can run for minutes). */
  ask<T extends From>(message: To, timeoutMs = 900_000): Promise<T> {
    this.send(message);
    return this.next<T>(timeoutMs);
  }

  stop(): void {
    this.child.kill();
  }
}
