import { MAX_GRID_POINTS } from '../../domain/series/grid.js';
import type { Queryable } from '../db/pool.js';
import { foldedLean } from './status-compaction.js';

/**
 * What a node page's trends read (document 3, `trends` of `/ui/nodes/{id}/overview`):
 * the self-metrics archive and the node's report and apply status events since
 * a time, oldest first. At most `MAX_TREND_ROWS` of the newest rows each:
 * document 3 allows a series at most 200 points, and a day of the 5-minute
 * archive is 288 rows.
 */
export const MAX_TREND_ROWS = MAX_GRID_POINTS;

export interface SelfMetricsRow {
  at: Date;
  cpu_percent: number;
  rss_bytes: number;
  last_routing_collect_seconds: number | null;
  last_reresolve_seconds: number | null;
}

export async function selfMetricsSince(db: Queryable, nodeId: string, since: Date): Promise<SelfMetricsRow[]> {
  const { rows } = await db.query(
    `SELECT * FROM (
       SELECT at, cpu_percent, rss_bytes, last_routing_collect_seconds, last_reresolve_seconds FROM self_metrics_samples
       WHERE node_id = $1 AND at >= $2 ORDER BY at DESC LIMIT ${MAX_TREND_ROWS}
     ) newest ORDER BY at`,
    [nodeId, since],
  );
  return rows.map((r: Record<string, any>) => ({ ...r, rss_bytes: Number(r.rss_bytes) }) as SelfMetricsRow);
}

export interface StatusPoint {
  created_at: Date;
  status: string | null;
  drift_count: number | null;
}

/** The node's status events of one kind since a time, oldest first. */
export async function statusPointsSince(db: Queryable, nodeId: string, kind: 'report' | 'apply', since: Date): Promise<StatusPoint[]> {
  const { rows } = await db.query(
    `SELECT * FROM (
       SELECT id, created_at, status, drift_count FROM (
         (SELECT id, created_at, status, drift_count FROM status_snapshots
          WHERE node_id = $1 AND kind = $2 AND created_at >= $3 ORDER BY id DESC LIMIT ${MAX_TREND_ROWS})
         UNION ALL
         (SELECT id, created_at, status, drift_count FROM (${foldedLean(`SELECT * FROM status_snapshot_hours WHERE node_id = $1 AND kind = $2 AND hour > $3::timestamptz - interval '1 hour'
            ORDER BY last_id DESC LIMIT ${MAX_TREND_ROWS}`)}) f WHERE created_at >= $3)
       ) e ORDER BY id DESC LIMIT ${MAX_TREND_ROWS}
     ) newest ORDER BY id`,
    [nodeId, kind, since],
  );
  return rows.map((r: Record<string, any>) => ({ created_at: r.created_at, status: r.status, drift_count: r.drift_count }));
}
