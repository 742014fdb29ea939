// (a) Append throughput: single-event appends with an explicit expected version,
// 1 and 16 concurrent writers, each on streams of its own, against raw INSERTs of
// the same rows into a copy of the events table (one INSERT per transaction).
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import type pg from 'pg';
import { createPool } from '../infra/db/pool.js';
import { PgEventStore } from '../infra/eventstore/postgres/store.js';
import {
  EVENT_TYPES,
  MemorySampler,
  envInt,
  eventData,
  now,
  percentile,
  progress,
  ratio,
  report,
  round,
  silentLog,
  withBenchDatabase,
  type Benchmark,
  type MemoryFigures,
} from './support.js';

/** Streams each writer cycles through (its own; no writer reads or contends for another's). */
const STREAMS_PER_WRITER = 8;

interface PhaseResult {
  events: number;
  seconds: number;
  eventsPerSecond: number;
  p50: number;
  p99: number;
  memory: MemoryFigures;
  /** Every append's latency (ms), sorted. */
  latencies: Float64Array;
}

/** Rounds of one side as one phase: events over total time, percentiles over every latency, the highest memory figures. */
function combine(rounds: readonly PhaseResult[]): PhaseResult {
  const events = rounds.reduce((n, r) => n + r.events, 0);
  const seconds = rounds.reduce((n, r) => n + r.seconds, 0);
  const latencies = new Float64Array(events);
  let at = 0;
  for (const r of rounds) {
    latencies.set(r.latencies, at);
    at += r.latencies.length;
  }
  latencies.sort();
  const memory = Object.fromEntries(
    Object.keys(rounds[0].memory).map((k) => [k, Math.max(...rounds.map((r) => r.memory[k as keyof MemoryFigures] as number))]),
  ) as unknown as MemoryFigures;
  return { events, seconds, eventsPerSecond: events / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), memory, latencies };
}

/**
 * Starts `writers` concurrent loops; loop w calls `one(w, i)` for its i-th event,
 * timing each call. `warm` runs once per writer first, untimed (connections,
 * stream creation, JIT).
 */
async function runWriters(
  writers: number,
  events: number,
  warm: (w: number) => Promise<void>,
  one: (w: number, i: number) => Promise<void>,
): Promise<PhaseResult> {
  await Promise.all(Array.from({ length: writers }, (_, w) => warm(w)));
  const perWriter = Math.ceil(events / writers);
  const latencies = new Float64Array(perWriter * writers);
  const sampler = new MemorySampler();
  const start = now();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < perWriter; i++) {
        const t0 = now();
        await one(w, i);
        latencies[w * perWriter + i] = now() - t0;
      }
    }),
  );
  const seconds = (now() - start) / 1000;
  const memory = sampler.stop();
  latencies.sort();
  return {
    events: latencies.length,
    seconds,
    eventsPerSecond: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    memory,
    latencies,
  };
}

const metadata = () => ({ actor: 'user:bench', requestId: randomUUID() });

/** Event store: append one event per call, expected version tracked in memory. */
async function storePhase(store: PgEventStore, writers: number, events: number, run: string): Promise<PhaseResult> {
  const streams = (w: number) => Array.from({ length: STREAMS_PER_WRITER }, (_, s) => `bench-${run}-w${w}-s${s}`);
  const versions = new Map<string, number>();
  return runWriters(
    writers,
    events,
    async (w) => {
      for (const streamId of streams(w)) {
        const result = await store.append([{ streamId, expected: 'no_stream', events: [{ type: EVENT_TYPES[0], data: eventData(0) }] }], metadata());
        versions.set(streamId, result.versions[streamId]);
      }
    },
    async (w, i) => {
      const streamId = `bench-${run}-w${w}-s${i % STREAMS_PER_WRITER}`;
      const expected = versions.get(streamId)!;
      const n = w * 1_000_000 + i;
      await store.append([{ streamId, expected, events: [{ type: EVENT_TYPES[n % EVENT_TYPES.length], data: eventData(n) }] }], metadata());
      versions.set(streamId, expected + 1);
    },
  );
}

const RAW_INSERT = `INSERT INTO bench_raw_events (stream_id, version, type, data, metadata) VALUES ($1, $2, $3, $4::jsonb, $5::jsonb)`;

/** Baseline: the same row, one autocommitted INSERT (one transaction) per event, through pg directly. */
async function rawPhase(pool: pg.Pool, writers: number, events: number, run: string): Promise<PhaseResult> {
  const versions = new Map<string, number>();
  const insert = async (streamId: string, version: number, n: number) => {
    const meta = JSON.stringify({ ...metadata(), recordedAt: new Date().toISOString() });
    await pool.query(RAW_INSERT, [streamId, version, EVENT_TYPES[n % EVENT_TYPES.length], JSON.stringify(eventData(n)), meta]);
  };
  return runWriters(
    writers,
    events,
    async (w) => {
      for (let s = 0; s < STREAMS_PER_WRITER; s++) {
        const streamId = `raw-${run}-w${w}-s${s}`;
        await insert(streamId, 0, 0);
        versions.set(streamId, 0);
      }
    },
    async (w, i) => {
      const streamId = `raw-${run}-w${w}-s${i % STREAMS_PER_WRITER}`;
      const version = versions.get(streamId)! + 1;
      await insert(streamId, version, w * 1_000_000 + i);
      versions.set(streamId, version);
    },
  );
}

export const appendBench: Benchmark = {
  name: 'append',
  description: 'single-event appends with explicit expected version vs raw INSERT, 1 and 16 writers',
  async run() {
    const cases = [
      { writers: 1, events: envInt('BENCH_APPEND_EVENTS_1', 5_000) },
      { writers: 16, events: envInt('BENCH_APPEND_EVENTS_16', 20_000) },
    ];
    const rounds = envInt('BENCH_APPEND_ROUNDS', 4);
    await withBenchDatabase({ poolSize: 2 }, async ({ db, pool }) => {
      // Same columns, defaults, identity, constraints and indexes as `events`.
      await pool.query('CREATE TABLE bench_raw_events (LIKE events INCLUDING ALL)');
      for (const { writers, events } of cases) {
        // Pools sized to the writers, so neither side queues for a connection.
        const storePool = createPool(db.url, writers);
        const rawPool = createPool(db.url, writers);
        try {
          const writerStore = new PgEventStore({ pool: storePool, log: silentLog });
          // Raw and store alternate in rounds: on a machine shared with other work, the load
          // then changes under both sides alike instead of under one phase.
          const rawRounds: PhaseResult[] = [];
          const storeRounds: PhaseResult[] = [];
          for (let r = 0; r < rounds; r++) {
            progress(`append: ${writers} writer(s), round ${r + 1}/${rounds}: ${Math.ceil(events / rounds)} raw INSERTs, then as many appends`);
            rawRounds.push(await rawPhase(rawPool, writers, Math.ceil(events / rounds), `${writers}-${r}`));
            storeRounds.push(await storePhase(writerStore, writers, Math.ceil(events / rounds), `${writers}-${r}`));
          }
          const raw = combine(rawRounds);
          const subject = combine(storeRounds);
          report({
            bench: 'append',
            writers,
            rounds,
            load_average: loadavg().map((l) => round(l, 1)),
            events: subject.events,
            seconds: round(subject.seconds),
            events_per_s: round(subject.eventsPerSecond),
            p50_ms: round(subject.p50),
            p99_ms: round(subject.p99),
            baseline: {
              name: 'raw INSERT',
              events: raw.events,
              seconds: round(raw.seconds),
              events_per_s: round(raw.eventsPerSecond),
              p50_ms: round(raw.p50),
              p99_ms: round(raw.p99),
            },
            ratio: ratio(subject.eventsPerSecond, raw.eventsPerSecond),
            rss_mb: subject.memory.peak_rss_mb,
            heap_delta_mb: subject.memory.heap_delta_mb,
            heap_growth_mb: subject.memory.heap_growth_mb,
          });
        } finally {
          await storePool.end();
          await rawPool.end();
        }
      }
    });
  },
};
