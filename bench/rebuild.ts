// (b) Reading the whole log: `readAll` alone in batches of 1000, and
// ProjectionRuntime.rebuild() of a trivial projection, over BENCH_EVENTS
// (default 1,000,000) generated events, against `COPY (SELECT ... ORDER BY ...)
// TO STDOUT` of the same rows.
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import * as sql from '../infra/eventstore/postgres/sql.js';
import { START, type EventStore } from '../infra/eventstore/types.js';
import type { Projection } from '../projections/runtime/projection.js';
import { ProjectionRuntime } from '../projections/runtime/runtime.js';
import {
  BudgetExceeded,
  EVENT_TYPES,
  envInt,
  measure,
  now,
  phaseBudgetSeconds,
  progress,
  ratio,
  report,
  round,
  silentLog,
  withBenchDatabase,
  type Benchmark,
} from './support.js';

/** Events per stream in the generated log; streams = events / this. */
const EVENTS_PER_STREAM = 10;
/** Generated events per INSERT (one transaction each), so the log spans many transaction ids. */
const CHUNK = 20_000;
const BATCH = 1000;

/**
 * The trivial projection, row at a time: one INSERT per event through `apply`
 * (one round trip each), which is how most projections are written. It inserts
 * rather than updates: a per-stream or per-type counter updated a million times
 * inside the rebuild's single transaction would measure PostgreSQL's cost for
 * row versions it cannot prune before commit, not the runtime.
 */
export const eventRowsProjection: Projection = {
  name: 'bench_event_rows',
  mode: 'async',
  handles: EVENT_TYPES,
  tables: ['bench_event_rows'],
  migrations: { name: 'bench-projection', dir: fileURLToPath(new URL('./migrations', import.meta.url)) },
  async apply(tx, event) {
    await tx.query('INSERT INTO bench_event_rows (position, stream_id, type) VALUES ($1, $2, $3)', [event.position.pos.toString(), event.streamId, event.type]);
  },
};

/**
 * Events per stream, written a runner batch at a time: one multi-row upsert per
 * batch (`applyBatch`), the way a projection that can batch should be written.
 */
export const streamCountsBatchedProjection: Projection = {
  name: 'bench_stream_counts_batched',
  mode: 'async',
  handles: EVENT_TYPES,
  tables: ['bench_stream_counts'],
  async apply(tx, event) {
    await this.applyBatch!(tx, [event]);
  },
  async applyBatch(tx, events) {
    const byStream = new Map<string, { events: number; type: string; position: string }>();
    for (const e of events) {
      const row = byStream.get(e.streamId);
      byStream.set(e.streamId, { events: (row?.events ?? 0) + 1, type: e.type, position: e.position.pos.toString() });
    }
    const rows = [...byStream];
    await tx.query(
      `INSERT INTO bench_stream_counts (stream_id, events, last_type, last_position)
       SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::bigint[])
       ON CONFLICT (stream_id) DO UPDATE
       SET events = bench_stream_counts.events + EXCLUDED.events, last_type = EXCLUDED.last_type, last_position = EXCLUDED.last_position`,
      [rows.map(([id]) => id), rows.map(([, r]) => r.events), rows.map(([, r]) => r.type), rows.map(([, r]) => r.position)],
    );
  },
};

const TYPES_SQL = `ARRAY[${EVENT_TYPES.map((t) => `'${t}'`).join(', ')}]`;

/**
 * Event g (0-based) is version g / S of stream g % S, so versions grow with the
 * position as real appends would make them. Data has the shape of support.ts's
 * `eventData` (about 215 bytes of JSON), metadata what the store writes.
 */
const GENERATE_EVENTS = `
  INSERT INTO events (stream_id, version, type, data, metadata, recorded_at)
  SELECT
    'peering-' || lpad((g % $3)::text, 7, '0'),
    g / $3,
    (${TYPES_SQL})[1 + g % ${EVENT_TYPES.length}],
    jsonb_build_object(
      'node', 'node-' || lpad((g % 500)::text, 4, '0'),
      'asn', 4242420000 + g % 10000,
      'peerAsn', 4242420000 + (g * 7) % 10000,
      'endpoint', '198.51.' || (g % 256) || '.' || ((g / 256) % 256) || ':' || (20000 + g % 10000),
      'publicKey', repeat(substr(x.h, 1, 8), 5) || 'abc=',
      'mtu', 1420,
      'tags', jsonb_build_array('wireguard', 'bgp'),
      'note', 'session ' || substr(x.h, 9, 8) || ' up'),
    jsonb_build_object(
      'actor', 'user:' || (g % 97),
      'requestId', x.h::uuid::text,
      'recordedAt', to_char(x.ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
    x.ts
  FROM generate_series($1::bigint, $2::bigint) AS g,
    LATERAL (SELECT md5(g::text) AS h, timestamptz '2026-01-01 00:00:00+00' + g * interval '1 second' AS ts) AS x`;

const GENERATE_STREAMS = `
  INSERT INTO streams (stream_id, version)
  SELECT 'peering-' || lpad(s::text, 7, '0'), ($1::bigint - 1 - s) / $2
  FROM generate_series(0, $2::bigint - 1) AS s`;

/** Every column (so the baseline keeps up with the schema), in the store's global order. */
const COPY_SQL = `COPY (SELECT * FROM events ORDER BY tx_id, position) TO STDOUT`;

export async function generateEvents(pool: pg.Pool, events: number): Promise<{ seconds: number; avgDataBytes: number; tableMb: number }> {
  const start = now();
  const streams = Math.ceil(events / EVENTS_PER_STREAM);
  for (let from = 0; from < events; from += CHUNK) {
    await pool.query(GENERATE_EVENTS, [from, Math.min(events, from + CHUNK) - 1, streams]);
    if ((from / CHUNK) % 10 === 9) progress(`rebuild: generated ${from + CHUNK} events`);
  }
  await pool.query(GENERATE_STREAMS, [events, streams]);
  // Hint bits, visibility map and statistics, as a settled table would have them.
  await pool.query('VACUUM (ANALYZE) events');
  await pool.query('VACUUM (ANALYZE) streams');
  const stats = await pool.query<{ data: string; size: string }>(
    `SELECT avg(octet_length(data::text))::float8 AS data, pg_total_relation_size('events')::float8 AS size FROM events`,
  );
  return { seconds: (now() - start) / 1000, avgDataBytes: Number(stats.rows[0].data), tableMb: Number(stats.rows[0].size) / 2 ** 20 };
}

/** The baseline: the same rows in the same order, streamed as COPY text and only counted. */
async function copyAll(pool: pg.Pool): Promise<{ rows: number; bytes: number }> {
  const client = await pool.connect();
  try {
    const stream = client.query(copyTo(COPY_SQL));
    let rows = 0;
    let bytes = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows += 1;
    }
    return { rows, bytes };
  } finally {
    client.release();
  }
}

/**
 * readAll from START to the end in batches of 1000, as the rebuild and
 * subscriptions read; stops at the phase's time budget.
 */
async function readEverything(store: EventStore, budgetSeconds: number): Promise<{ events: number; complete: boolean }> {
  const deadline = now() + budgetSeconds * 1000;
  let position = START;
  let events = 0;
  for (;;) {
    const batch = await store.readAll(position, BATCH);
    if (batch.length === 0) return { events, complete: true };
    events += batch.length;
    position = batch[batch.length - 1].position;
    if (now() > deadline) return { events, complete: false };
  }
}

/** ProjectionRuntime.rebuild(), aborted (rolled back) at the phase's time budget. */
async function rebuildProjection(runtime: ProjectionRuntime, name: string, budgetSeconds: number): Promise<{ events: number; complete: boolean }> {
  const deadline = now() + budgetSeconds * 1000;
  try {
    const [result] = await runtime.rebuild([name], (p) => {
      if (now() > deadline) throw new BudgetExceeded(p.events);
    });
    return { events: result.events, complete: true };
  } catch (err) {
    if (err instanceof BudgetExceeded) return { events: err.done, complete: false };
    throw err;
  }
}

/** The plan PostgreSQL picks for the store's readAll from the middle of the log, as "Node > Node > ...". */
async function readAllPlan(pool: pg.Pool, events: number): Promise<string> {
  const mid = await pool.query<{ tx_id: string; position: string }>('SELECT tx_id::text AS tx_id, position FROM events ORDER BY position OFFSET $1 LIMIT 1', [
    Math.floor(events / 2),
  ]);
  const at = mid.rows[0] ?? { tx_id: '0', position: '0' };
  const explained = await pool.query(`EXPLAIN (FORMAT JSON) ${sql.readAll}`, [at.tx_id, at.position, BATCH, '9223372036854775807']);
  const names: string[] = [];
  for (let node = explained.rows[0]['QUERY PLAN'][0].Plan; node; node = node.Plans?.[0]) {
    names.push(
      `${node['Node Type']}${node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}` +
        `${node['Index Name'] ? ` using ${node['Index Name']}` : ''}${node['Sort Key'] ? ` by ${node['Sort Key'].join(', ')}` : ''}`,
    );
  }
  return names.join(' > ');
}

const problems: string[] = [];

/** A wrong result is reported on its line (`ok: false`) and fails the run at the end, after the other benchmarks. */
function check(ok: boolean, problem: string): { ok: boolean; problem?: string } {
  if (ok) return { ok };
  problems.push(problem);
  process.exitCode = 1;
  return { ok, problem };
}

export const rebuildBench: Benchmark = {
  name: 'rebuild',
  description: 'readAll and ProjectionRuntime.rebuild() over BENCH_EVENTS (1M) events vs COPY TO STDOUT',
  async run() {
    const events = envInt('BENCH_EVENTS', 1_000_000);
    const budget = phaseBudgetSeconds();
    await withBenchDatabase({ poolSize: 4, migrations: [eventRowsProjection.migrations!] }, async ({ pool, store }) => {
      const runtime = new ProjectionRuntime(store, pool, [eventRowsProjection, streamCountsBatchedProjection], silentLog);
      await runtime.attach();
      progress(`rebuild: generating ${events} events`);
      const gen = await generateEvents(pool, events);
      const setup = { generate_s: round(gen.seconds), avg_data_bytes: round(gen.avgDataBytes, 0), events_table_mb: round(gen.tableMb, 0) };

      progress('rebuild: COPY baseline');
      const copy = await measure(() => copyAll(pool));
      if (copy.result.rows !== events) throw new Error(`COPY returned ${copy.result.rows} rows, expected ${events}`);
      const copyPerSecond = events / copy.seconds;
      const baseline = {
        name: 'COPY TO STDOUT',
        seconds: round(copy.seconds),
        events_per_s: round(copyPerSecond),
        mb: round(copy.result.bytes / 2 ** 20, 0),
        peak_rss_mb: copy.memory.peak_rss_mb,
      };

      progress(`rebuild: readAll (budget ${budget} s)`);
      const plan = await readAllPlan(pool, events);
      const read = await measure(() => readEverything(store, budget));
      const readPerSecond = read.result.events / read.seconds;
      report({
        bench: 'rebuild',
        case: 'readAll',
        events: read.result.events,
        complete: read.result.complete,
        ...check(!read.result.complete || read.result.events === events, `readAll delivered ${read.result.events} of ${events} events`),
        batch: BATCH,
        seconds: round(read.seconds),
        events_per_s: round(readPerSecond),
        baseline,
        ratio: ratio(readPerSecond, copyPerSecond),
        ...read.memory,
        ...setup,
        read_plan: plan,
      });

      for (const projection of [streamCountsBatchedProjection, eventRowsProjection]) {
        const batched = projection.applyBatch !== undefined;
        progress(`rebuild: ProjectionRuntime.rebuild() of ${projection.name} (budget ${budget} s)`);
        const rebuilt = await measure(() => rebuildProjection(runtime, projection.name, budget));
        const table = await pool.query<{ rows: string; total: string }>(
          batched
            ? 'SELECT count(*) AS rows, coalesce(sum(events), 0) AS total FROM bench_stream_counts'
            : 'SELECT count(*) AS rows, count(*) AS total FROM bench_event_rows',
        );
        const rebuildPerSecond = rebuilt.result.events / rebuilt.seconds;
        report({
          bench: 'rebuild',
          case: batched ? 'rebuild, applyBatch' : 'rebuild, apply per event',
          projection: projection.name,
          events: rebuilt.result.events,
          complete: rebuilt.result.complete,
          ...check(
            !rebuilt.result.complete || (rebuilt.result.events === events && Number(table.rows[0].total) === events),
            `rebuild of ${projection.name} applied ${rebuilt.result.events} of ${events} events; its table counts ${table.rows[0].total}`,
          ),
          seconds: round(rebuilt.seconds),
          events_per_s: round(rebuildPerSecond),
          baseline,
          ratio: ratio(rebuildPerSecond, copyPerSecond),
          ratio_to_readAll: ratio(rebuildPerSecond, readPerSecond),
          ...rebuilt.memory,
          ...setup,
        });
      }
    });
    if (problems.length > 0) progress(`rebuild: WRONG RESULTS: ${problems.join('; ')}`);
  },
};
