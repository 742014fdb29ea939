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
