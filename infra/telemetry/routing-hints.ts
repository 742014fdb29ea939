import type { RoutingHints } from '../../domain/console/internal-topology.js';
import type { Queryable } from '../db/pool.js';

/**
 * What the internal-topology view reads from a node's latest routing table
 * (`routing_tables` for its capture time, its routes as `routing_routes` rows,
 * both written when the table arrives): its routes counted by protocol and which
 * of `prefixes` (canonical) it holds, both computed in PostgreSQL so a
 * 20,000-route table is not shipped to the server. BIRD prints prefixes
 * canonical; the comparison ignores case. Undefined: no table reported.
 */
export async function routingHints(db: Queryable, nodeId: string, prefixes: readonly string[]): Promise<RoutingHints | undefined> {
  const { rows } = await db.query<{ captured_at: Date; by_protocol: Record<string, number>; present: string[] }>(
    `SELECT t.captured_at,
       (SELECT coalesce(jsonb_object_agg(c.protocol, c.n), '{}') FROM
          (SELECT protocol, count(*) AS n FROM routing_routes WHERE node_id = $1 GROUP BY 1) c) AS by_protocol,
       (SELECT coalesce(array_agg(DISTINCT lower(prefix)), '{}') FROM routing_routes
          WHERE node_id = $1 AND lower(prefix) = ANY($2::text[])) AS present
     FROM routing_tables t WHERE t.node_id = $1`,
    [nodeId, prefixes.map((p) => p.toLowerCase())],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    captured_at: new Date(row.captured_at).toISOString(),
    routes_by_protocol: new Map(Object.entries(row.by_protocol).map(([protocol, n]) => [protocol, Number(n)])),
    present: new Set(row.present),
  };
}
