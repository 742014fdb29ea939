import { gridEnd, type Grid } from '../../domain/series/grid.js';
import type { RuntimeSnapshot } from '../../domain/telemetry/reports.js';
import type { Queryable } from '../db/pool.js';

/**
 * Route counts of each BGP session per address family over time (telemetry
 * migration 0009, `session_route_counts`), for the portal's
 * `/autopeering/requests/{id}/metrics`: one row per session and 5-minute bucket
 * of the snapshot's placed time, the newest snapshot of the bucket wins. A
 * session the agent reports without any per-family count (agents before
 * 1.0.233 send only totals) adds no row: its series reads null, not 0.
 */

export const ROUTE_COUNT_RETAINED_TABLES: readonly { table: string; column: string }[] = [{ table: 'session_route_counts', column: 'bucket' }];

/** The sessions of a snapshot that carry a per-family count (archived by `archiveSnapshot`, store.ts). */
export function routeCountRows(snapshot: RuntimeSnapshot): RuntimeSnapshot['bgp_protocols'] {
  return snapshot.bgp_protocols.filter((p) =>
    [p.routes_imported_v4, p.routes_imported_v6, p.routes_exported_v4, p.routes_exported_v6].some((v) => v !== undefined && v !== null),
  );
}

export interface RouteCountCell {
  session: string;
  /** Grid bucket start, epoch seconds. */
  b: number;
  imported_v4: number | null;
  imported_v6: number | null;
  exported_v4: number | null;
  exported_v6: number | null;
}

/** Per session and grid bucket: the newest archived counts inside the bucket. */
export async function routeCountCells(db: Queryable, nodeId: string, sessions: readonly string[], grid: Grid): Promise<RouteCountCell[]> {
  if (sessions.length === 0) return [];
  const { rows } = await db.query(
    `SELECT DISTINCT ON (session, b) session, b, imported_v4, imported_v6, exported_v4, exported_v6 FROM (
       SELECT *, (floor(extract(epoch FROM bucket) / $3) * $3)::bigint AS b FROM session_route_counts
       WHERE node_id = $1 AND session = ANY($2) AND bucket >= to_timestamp($4) AND bucket < to_timestamp($5)) c
     ORDER BY session, b, at DESC`,
    [nodeId, sessions, grid.bucket_seconds, grid.start, gridEnd(grid)],
  );
  return rows.map((r: RouteCountCell & { b: string }) => ({ ...r, b: Number(r.b) }));
}
