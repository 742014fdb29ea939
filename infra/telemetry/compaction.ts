import { withTransaction, type Pool, type Queryable } from '../db/pool.js';
import { compactStatusSnapshots } from './status-compaction.js';

/**
 * Compaction of the sample tables (migrations/0033_compacted_hours.sql): the
 * ingest inserts one row per sample; the telemetry job folds every closed
 * period into one row per series and period with arrays of values, and deletes
 * the rows it folded, in one transaction per table and batch (a crash folds
 * all of a batch or nothing). Reads take both parts.
 *
 * A sample can arrive for a period already folded (an agent's `captured_at`
 * hours back): the next pass first unfolds that period's row back into raw rows,
 * merged by the same rule as the ingest's own conflict (`unfoldConflict`), then
 * folds the period again.
 */

/** A period is folded once it ended this long ago (samples placed at the agent's clock still arriving for it are few). */
export const COMPACT_AFTER_MS = 10 * 60_000;
/** At most this many hours of raw rows are folded per transaction (an upgraded deployment's backlog goes in steps). */
const HOURS_PER_BATCH = 6;

interface SampleCompaction {
  /** The table the ingest writes, its time column, and the compacted table. */
  raw: string;
  time: string;
  compact: string;
  /** The period of a raw row (SQL over its columns), and the raw rows whose period is closed at `$1`. */
  period: string;
  closed: string;
  /** The end of a raw row's period (SQL over its columns). */
  periodEnd: string;
  /** Re-inserts the rows of the compacted rows in `old` into the raw table (SELECT ... FROM old), and the conflict rule. */
  unfold: string;
  /** Folds the raw rows in `moved` into compacted rows (SELECT ... FROM moved GROUP BY ...). */
  fold: string;
  /** The compacted table's key columns, matching `period`'s output order (for the unfold). */
  key: string;
}

const HOUR = `date_bin('1 hour', __T__, to_timestamp(0))`;
const hourOf = (column: string) => HOUR.replace('__T__', column);

const SAMPLES: readonly SampleCompaction[] = [
  {
    raw: 'wireguard_traffic_samples',
    time: 'at',
    compact: 'wireguard_traffic_hours',
    period: `node_id, ${hourOf('at')}`,
    closed: `at < $1`,
    periodEnd: `${hourOf('at')} + interval '1 hour'`,
    key: 'node_id, hour',
    // The ingest keeps the later of two samples at one time: a raw row wins over the folded one.
    unfold: `INSERT INTO wireguard_traffic_samples (node_id, at, rx_bytes, tx_bytes, peer_count)
      SELECT o.node_id, o.hour + u.at_us * interval '1 microsecond', u.rx, u.tx, u.pc
      FROM old o, unnest(telemetry_undelta(o.at_us), telemetry_undelta(o.rx_bytes), telemetry_undelta(o.tx_bytes), o.peer_count) AS u(at_us, rx, tx, pc)
      ON CONFLICT DO NOTHING`,
    fold: `INSERT INTO wireguard_traffic_hours (node_id, hour, at_us, rx_bytes, tx_bytes, peer_count)
      SELECT node_id, hour, telemetry_delta(array_agg(telemetry_us(at, hour) ORDER BY at)), telemetry_delta(array_agg(rx_bytes ORDER BY at)),
        telemetry_delta(array_agg(tx_bytes ORDER BY at)), array_agg(peer_count ORDER BY at)
      FROM (SELECT *, ${hourOf('at')} AS hour FROM moved) m GROUP BY node_id, hour`,
  },
  {
    raw: 'interface_traffic_samples',
    time: 'bucket',
    compact: 'interface_traffic_hours',
    period: `node_id, ${hourOf('bucket')}`,
    closed: `bucket < $1`,
    periodEnd: `${hourOf('bucket')} + interval '1 hour'`,
    key: 'node_id, hour',
    // The ingest keeps a bucket's first sample: the folded one (it came first) wins over a raw one.
    unfold: `INSERT INTO interface_traffic_samples AS t (node_id, interface, bucket, at, rx_bytes, tx_bytes)
      SELECT o.node_id, u.name, date_bin('5 minutes', o.hour + u.at_us * interval '1 microsecond', to_timestamp(0)), o.hour + u.at_us * interval '1 microsecond', u.rx, u.tx
      FROM old o, unnest(o.interface, telemetry_undelta(o.at_us), telemetry_undelta(o.rx_bytes), telemetry_undelta(o.tx_bytes)) AS u(name, at_us, rx, tx)
      ON CONFLICT (node_id, interface, bucket) DO UPDATE SET at = EXCLUDED.at, rx_bytes = EXCLUDED.rx_bytes, tx_bytes = EXCLUDED.tx_bytes`,
    fold: `INSERT INTO interface_traffic_hours (node_id, hour, interface, at_us, rx_bytes, tx_bytes)
      SELECT node_id, hour, array_agg(interface ORDER BY interface, at), telemetry_delta(array_agg(telemetry_us(at, hour) ORDER BY interface, at)),
        telemetry_delta(array_agg(rx_bytes ORDER BY interface, at)), telemetry_delta(array_agg(tx_bytes ORDER BY interface, at))
      FROM (SELECT *, ${hourOf('bucket')} AS hour FROM moved) m GROUP BY node_id, hour`,
  },
  {
    raw: 'interface_traffic_rollups',
    time: 'bucket',
    compact: 'interface_traffic_rollup_periods',
    period: `width_s, node_id, ${ROLLUP_PERIOD('width_s', 'bucket')}`,
    closed: `${ROLLUP_PERIOD('width_s', 'bucket')} + make_interval(secs => greatest(3600, width_s)) <= $1`,
    periodEnd: `${ROLLUP_PERIOD('width_s', 'bucket')} + make_interval(secs => greatest(3600, width_s))`,
    key: 'width_s, node_id, period',
    // Sums: a folded bucket and a raw one add up.
    unfold: `INSERT INTO interface_traffic_rollups AS t (width_s, node_id, bucket, interface, rx_bytes, tx_bytes, seconds)
      SELECT o.width_s, o.node_id, o.period + make_interval(secs => u.b), u.name, u.rx, u.tx, u.s
      FROM old o, unnest(o.interface, o.bucket_s, o.rx_bytes, o.tx_bytes, o.seconds) AS u(name, b, rx, tx, s)
      ON CONFLICT (width_s, node_id, bucket, interface) DO UPDATE SET
        rx_bytes = t.rx_bytes + EXCLUDED.rx_bytes, tx_bytes = t.tx_bytes + EXCLUDED.tx_bytes, seconds = t.seconds + EXCLUDED.seconds`,
    fold: `INSERT INTO interface_traffic_rollup_periods (width_s, node_id, period, interface, bucket_s, rx_bytes, tx_bytes, seconds)
      SELECT width_s, node_id, period, array_agg(interface ORDER BY interface, bucket), array_agg(extract(epoch FROM bucket - period)::int ORDER BY interface, bucket),
        array_agg(rx_bytes ORDER BY interface, bucket), array_agg(tx_bytes ORDER BY interface, bucket), array_agg(seconds ORDER BY interface, bucket)
      FROM (SELECT *, ${ROLLUP_PERIOD('width_s', 'bucket')} AS period FROM moved) m GROUP BY width_s, node_id, period`,
  },
];

/** The period a rollup bucket of width `width` is folded into: its hour, or the bucket itself when wider than an hour. */
function ROLLUP_PERIOD(width: string, bucket: string): string {
  return `date_bin(make_interval(secs => greatest(3600, ${width})), ${bucket}, to_timestamp(0))`;
}

/** The hour boundary before which periods are closed at `now`. */
export function compactionHorizon(now: Date): Date {
  const at = now.getTime() - COMPACT_AFTER_MS;
  return new Date(Math.floor(at / 3_600_000) * 3_600_000);
}

/** Folds one batch of `spec`'s closed rows before `upTo`; answers the raw rows folded. */
async function foldBatch(db: Queryable, spec: SampleCompaction, upTo: Date): Promise<number> {
  // Periods already folded that raw rows came for: back into raw rows first (rare).
  await db.query(
    `WITH old AS (DELETE FROM ${spec.compact} WHERE (${spec.key}) IN (SELECT DISTINCT ${spec.period} FROM ${spec.raw} WHERE ${spec.closed}) RETURNING *)
     ${spec.unfold}`,
    [upTo],
  );
  // A row inserted meanwhile is not in this statement's snapshot: it stays raw, for the next pass.
  const { rowCount } = await db.query(`WITH moved AS (DELETE FROM ${spec.raw} WHERE ${spec.closed} RETURNING *) ${spec.fold}`, [upTo]);
  return rowCount ?? 0;
}

/**
 * Folds the closed periods of one sample table, oldest first, at most
 * `HOURS_PER_BATCH` hours per transaction; answers the compacted rows written.
 */
async function compactSamples(pool: Pool, spec: SampleCompaction, horizon: Date): Promise<number> {
  let written = 0;
  for (;;) {
    // The earliest end of a closed period: folding up to it (or a few hours on) folds at least that period.
    const { rows } = await pool.query(`SELECT min(${spec.periodEnd}) AS first FROM ${spec.raw} WHERE ${spec.closed}`, [horizon]);
    if (rows[0].first === null) return written;
    const first = (rows[0].first as Date).getTime();
    const upTo = new Date(Math.min(horizon.getTime(), first + (HOURS_PER_BATCH - 1) * 3_600_000));
    written += await withTransaction(pool, (tx) => foldBatch(tx, spec, upTo));
  }
}

/**
 * One compaction pass at `now` (the telemetry job's): every sample table and
 * the status snapshots, each period closed `COMPACT_AFTER_MS` before `now`.
 * Answers the compacted rows written per table.
 */
export async function compactTelemetry(pool: Pool, now: Date): Promise<Record<string, number>> {
  const horizon = compactionHorizon(now);
  const written: Record<string, number> = {};
  for (const spec of SAMPLES) written[spec.compact] = await compactSamples(pool, spec, horizon);
  written.status_snapshot_hours = await compactStatusSnapshots(pool, horizon);
  await truncateFoldedDays(pool, horizon);
  return written;
}

/** The raw tables the compaction empties, partitioned by day (migrations/0030, 0031). */
const RAW_TABLES = [...SAMPLES.map((s) => s.raw), 'status_snapshots'];

/**
 * Gives back the space of the raw tables' daily partitions that are folded
 * whole (every period of the day closed before `horizon`): their rows are gone,
 * but their indexes (and pages vacuum has not yet returned) stay on disk until
 * retention drops them. Each is truncated only when it holds no row, under a lock
 * that keeps a late insert out until the truncation commits (and gives up after a
 * second rather than keep inserts waiting; the next pass tries again).
 */
async function truncateFoldedDays(pool: Pool, horizon: Date): Promise<void> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
     WHERE p.relname = ANY($1) AND c.relname ~ '_p[0-9]{8}$'
       AND (to_date(right(c.relname, 8), 'YYYYMMDD') + 1)::timestamp AT TIME ZONE 'UTC' <= $2
       AND (pg_relation_size(c.oid) > 0 OR pg_indexes_size(c.oid) > 65536)
     ORDER BY 1`,
    [RAW_TABLES, horizon],
  );
  for (const { name } of rows) {
    await withTransaction(pool, async (tx) => {
      await tx.query(`SET LOCAL lock_timeout = '1s'`);
      const locked = await tx
        .query(`LOCK TABLE ${name} IN ACCESS EXCLUSIVE MODE`)
        .then(() => true)
        .catch((e: { code?: string }) => {
          if (e.code === '55P03') return false;
          throw e;
        });
      if (!locked) return;
      const { rows: left } = await tx.query(`SELECT EXISTS (SELECT 1 FROM ${name}) AS any`);
      if (!left[0].any) await tx.query(`TRUNCATE ${name}`);
    });
  }
}

/** The compacted tables and their period column, pruned by retention like the tables they compact. */
export const COMPACTED_RETAINED_TABLES = [
  { table: 'wireguard_traffic_hours', column: 'hour', partitionKey: 'hour' },
  { table: 'interface_traffic_hours', column: 'hour', partitionKey: 'hour' },
  { table: 'interface_traffic_rollup_periods', column: 'period', partitionKey: 'period' },
  { table: 'status_snapshot_hours', column: 'hour', partitionKey: 'hour' },
] as const;
