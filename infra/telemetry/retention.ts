import type { Queryable } from '../db/pool.js';
import { SAMPLE_RETENTION_DAYS } from '../../domain/series/placement.js';
import { COMPACTED_RETAINED_TABLES } from './compaction.js';
import { FLAP_RATE_RETAINED_TABLES } from './flap-rate.js';
import { ROUTE_COUNT_RETAINED_TABLES } from './route-counts.js';
import { SERIES_RETAINED_TABLES } from './series.js';
import { RETAINED_TABLES, type RetainedTable } from './store.js';

/** How long samples, rollups, reports, status events, the flap-rate and the route-count archives are kept. */
export const RETENTION_DAYS = SAMPLE_RETENTION_DAYS;

/** Every table the retention job prunes. */
export const ALL_RETAINED_TABLES: readonly RetainedTable[] = [
  ...RETAINED_TABLES,
  ...SERIES_RETAINED_TABLES,
  ...FLAP_RATE_RETAINED_TABLES,
  ...ROUTE_COUNT_RETAINED_TABLES,
  ...COMPACTED_RETAINED_TABLES,
];

/** Days ahead of `now` (UTC) that partitioned tables get their partition in advance. */
const DAYS_AHEAD = 2;

/**
 * Removes telemetry rows older than the retention window before `now`; returns
 * the count per table. A table partitioned by day loses every partition that
 * ends at or before the cutoff (`DROP TABLE`: no dead rows, the space goes back
 * at once), then the rows before the cutoff in the partition that holds it and
 * in the default partition (a BRIN index on the time column finds them).
 * Partitions for today and the next days are made first.
 */
export async function pruneTelemetry(db: Queryable, now: Date, days = RETENTION_DAYS): Promise<Record<string, number>> {
  await ensureTelemetryPartitions(db, now);
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  const deleted: Record<string, number> = {};
  for (const { table, column, partitionKey, byDay } of ALL_RETAINED_TABLES) {
    let count = 0;
    if (partitionKey) {
      const dropped = await db.query<{ n: string }>(`SELECT telemetry_drop_partitions_before($1, $2) AS n`, [table, cutoff]);
      count += Number(dropped.rows[0].n);
    }
    // The partition key too, when there is one: the planner then reads only the partitions that can hold such rows.
    const pruneBy = partitionKey && partitionKey !== column ? ` AND ${partitionKey} < $1` : '';
    const before = byDay ? `($1::timestamptz AT TIME ZONE 'UTC')::date` : '$1';
    const result = await db.query(`DELETE FROM ${table} WHERE ${column} < ${before}${pruneBy}`, [cutoff]);
    deleted[table] = count + (result.rowCount ?? 0);
  }
  return deleted;
}

/** Makes the daily partitions of today and the next `DAYS_AHEAD` days (UTC) of every partitioned table, where missing. */
export async function ensureTelemetryPartitions(db: Queryable, now: Date): Promise<void> {
  const tables = ALL_RETAINED_TABLES.filter((t) => t.partitionKey);
  const today = Math.floor(now.getTime() / 86_400_000);
  const dates = Array.from({ length: DAYS_AHEAD + 1 }, (_, i) => new Date((today + i) * 86_400_000).toISOString().slice(0, 10));
  await db.query(`SELECT telemetry_partition_day(t.name, t.key, d::date) FROM unnest($1::text[], $2::text[]) AS t(name, key), unnest($3::text[]) AS d`, [
    tables.map((t) => t.table),
    tables.map((t) => t.partitionKey),
    dates,
  ]);
}

/**
 * Telemetry tables that hold the latest value per node (or one set for the
 * fleet), replaced or updated in place as reports arrive: their size follows the
 * fleet, not time, so they are never counted as growth (bench telemetry-ingest
 * and storage). Vacuum has to keep up with them instead.
 */
export const LATEST_VALUE_TABLES: readonly string[] = [
  'node_status',
  'wireguard_traffic_latest',
  'interface_counters_latest',
  'series_cursors',
  'routing_tables',
  'routing_routes',
  'routing_fleet_origins',
  'prefix_flaps',
  'prefix_flap_feeds',
  'agent_liveness',
];
