import type { Queryable } from '../db/pool.js';
import { SAMPLE_RETENTION_DAYS } from '../../domain/series/placement.js';
import { FLAP_RATE_RETAINED_TABLES } from './flap-rate.js';
import { ROUTE_COUNT_RETAINED_TABLES } from './route-counts.js';
import { SERIES_RETAINED_TABLES } from './series.js';
import { RETAINED_TABLES } from './store.js';

/** How long samples, rollups, reports, status events, the flap-rate and the route-count archives are kept. */
export const RETENTION_DAYS = SAMPLE_RETENTION_DAYS;

/** Deletes telemetry rows older than the retention window before `now`; returns the count per table. */
export async function pruneTelemetry(db: Queryable, now: Date, days = RETENTION_DAYS): Promise<Record<string, number>> {
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  const deleted: Record<string, number> = {};
  for (const { table, column } of [...RETAINED_TABLES, ...SERIES_RETAINED_TABLES, ...FLAP_RATE_RETAINED_TABLES, ...ROUTE_COUNT_RETAINED_TABLES]) {
    const result = await db.query(`DELETE FROM ${table} WHERE ${column} < $1`, [cutoff]);
    deleted[table] = result.rowCount ?? 0;
  }
  return deleted;
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
