import type { Queryable } from '../db/pool.js';

/**
 * Routes a node learnt through some BGP sessions, from its latest routing table
 * (`routing_routes`, replaced by each report), for the portal's
 * `/autopeering/requests/{id}/routes`. Ordered by prefix (`sort_key`, then the
 * report's order).
 */

export interface PeerRoute {
  prefix: string;
  origin_asn: number | null;
  as_path: number[];
  rpki: string | null;
}

export interface PeerRoutesPage {
  /** When the table was captured (agent clock); null: the node never sent one. */
  captured_at: string | null;
  total: number;
  routes: PeerRoute[];
}

export async function peerRoutes(
  db: Queryable,
  nodeId: string,
  sessions: readonly string[],
  family: 4 | 6,
  page: { limit: number; offset: number },
): Promise<PeerRoutesPage> {
  const { rows: table } = await db.query(`SELECT captured_at FROM routing_tables WHERE node_id = $1`, [nodeId]);
  const captured_at = table[0] ? (table[0].captured_at as Date).toISOString() : null;
  if (sessions.length === 0 || !captured_at) return { captured_at, total: 0, routes: [] };
  const { rows } = await db.query(
    `SELECT prefix, origin_asn::float8 AS origin_asn, as_path::float8[] AS as_path, rpki, count(*) OVER ()::int AS total
     FROM routing_routes WHERE node_id = $1 AND protocol = ANY($2) AND family = $3
     ORDER BY sort_key NULLS LAST, seq LIMIT $4 OFFSET $5`,
    [nodeId, sessions, family, page.limit, page.offset],
  );
  let total = rows[0]?.total as number | undefined;
  if (total === undefined) {
    // Past the last page: count alone.
    const { rows: n } = await db.query(`SELECT count(*)::int AS n FROM routing_routes WHERE node_id = $1 AND protocol = ANY($2) AND family = $3`, [
      nodeId,
      sessions,
      family,
    ]);
    total = n[0].n as number;
  }
  return { captured_at, total, routes: rows.map(({ total: _, ...r }: PeerRoute & { total: number }) => r) };
}
