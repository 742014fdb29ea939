import { RPKI_STATES, type Family, type RpkiCounts } from '../../domain/telemetry/routing.js';
import { advisoryKey, withTransaction, type Pool, type Queryable } from '../db/pool.js';
import { ORIGIN_ORDER, type OriginCount, type OriginsSort } from './routing.js';

/**
 * The fleet's routing view (migrations/0010_routing_analytics.sql): the union of
 * every node's latest table, computed after a table arrives and stored, because
 * over 50 nodes of 1,500 routes the union costs a few hundred milliseconds, which
 * a dashboard read must not pay. `routing_fleet_observations` keeps one row per
 * refresh (the fleet trend and the latest summary), `routing_fleet_origins` the
 * origins of the latest refresh.
 */

export interface FleetRoutingSummary {
  /** Nodes with a table among those given. */
  nodes_reporting: number;
  size: number;
  size_v4: number;
  size_v6: number;
  /** Distinct prefixes some node originates, and the others. */
  local: number;
  external: number;
  as_count: number;
  as_count_v4: number;
  as_count_v6: number;
  /** Distinct (prefix, origin) pairs per state over the tables with `rpki_observed`; null when none has it. */
  rpki: RpkiCounts | null;
  rpki_v4: RpkiCounts | null;
  rpki_v6: RpkiCounts | null;
}

export interface FleetOrigin extends OriginCount {
  /** Nodes whose table carries at least one of its prefixes. */
  nodes: number;
}

const EMPTY: FleetRoutingSummary = {
  nodes_reporting: 0,
  size: 0,
  size_v4: 0,
  size_v6: 0,
  local: 0,
  external: 0,
  as_count: 0,
  as_count_v4: 0,
  as_count_v6: 0,
  rpki: null,
  rpki_v4: null,
  rpki_v6: null,
};

export interface FleetRouting {
  /** The latest capture time among the tables of the union; null without any. */
  captured_at: string | null;
  summary: FleetRoutingSummary;
}

/** The union of the latest tables of `nodeIds`, computed from their route rows. */
async function computeFleetRouting(db: Queryable, nodeIds: readonly string[]): Promise<FleetRouting> {
  const sizes = await db.query(
    `WITH p AS (SELECT prefix, family, bool_or(local) AS local FROM routing_routes WHERE node_id = ANY($1) GROUP BY prefix, family),
          o AS (SELECT DISTINCT origin_asn, family FROM routing_routes WHERE node_id = ANY($1) AND origin_asn IS NOT NULL)
     SELECT (SELECT max(captured_at) FROM routing_tables WHERE node_id = ANY($1)) AS captured_at,
            (SELECT count(*) FROM routing_tables WHERE node_id = ANY($1))::int AS nodes_reporting,
            (SELECT count(*) FROM routing_tables WHERE node_id = ANY($1) AND rpki_observed)::int AS observing,
            (SELECT count(*) FROM p)::int AS size, (SELECT count(*) FROM p WHERE family = 4)::int AS size_v4, (SELECT count(*) FROM p WHERE family = 6)::int AS size_v6,
            (SELECT count(*) FROM p WHERE local)::int AS local,
            (SELECT count(DISTINCT origin_asn) FROM o)::int AS as_count, (SELECT count(*) FROM o WHERE family = 4)::int AS as_count_v4, (SELECT count(*) FROM o WHERE family = 6)::int AS as_count_v6`,
    [nodeIds],
  );
  const rpki = await db.query(
    `SELECT family, rpki, count(*)::int AS n
     FROM (SELECT DISTINCT r.family, r.prefix, r.origin_asn, r.rpki FROM routing_routes r JOIN routing_tables t ON t.node_id = r.node_id AND t.rpki_observed
           WHERE r.node_id = ANY($1) AND r.rpki IS NOT NULL) s
     GROUP BY family, rpki`,
    [nodeIds],
  );
  const { observing, captured_at, ...s } = sizes.rows[0];
  const counts = (family?: Family): RpkiCounts | null => {
    if (observing === 0) return null;
    const of = (state: string) =>
      rpki.rows
        .filter((r: { family: number; rpki: string }) => r.rpki === state && (family === undefined || r.family === family))
        .reduce((n: number, r: { n: number }) => n + r.n, 0);
    return Object.fromEntries(RPKI_STATES.map((state) => [state, of(state)])) as RpkiCounts;
  };
  return {
    captured_at: captured_at ? new Date(captured_at).toISOString() : null,
    summary: { ...s, external: s.size - s.local, rpki: counts(), rpki_v4: counts(4), rpki_v6: counts(6) },
  };
}

/**
 * Recomputes the fleet's view over `nodeIds` and stores it: a fleet observation
 * at `at` (the capture time of the table that caused it, the server's `now` when
 * that is ahead) and the origins. One
 * refresh at a time across instances, so the origins match the latest row.
 */
export async function refreshFleetRouting(pool: Pool, nodeIds: readonly string[], at: string, now: Date): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [advisoryKey('routing-fleet-refresh')]);
    const fleet = await computeFleetRouting(tx, nodeIds);
    const { size, size_v4, size_v6 } = fleet.summary;
    await tx.query(
      `INSERT INTO routing_fleet_observations (at, placed_at, received_at, size, size_v4, size_v6, summary)
       SELECT date_bin('5 minutes', p, 'epoch'), p, $2, $3, $4, $5, $6 FROM LEAST($1::timestamptz, $2) AS p
       ON CONFLICT (at) DO UPDATE SET seq = EXCLUDED.seq, placed_at = EXCLUDED.placed_at, received_at = EXCLUDED.received_at,
         size = EXCLUDED.size, size_v4 = EXCLUDED.size_v4, size_v6 = EXCLUDED.size_v6, summary = EXCLUDED.summary`,
      [at, now, size, size_v4, size_v6, JSON.stringify(fleet)],
    );
    await tx.query(`DELETE FROM routing_fleet_origins`);
    await tx.query(
      `INSERT INTO routing_fleet_origins (asn, count, count_v4, count_v6, nodes)
       SELECT origin_asn, count(DISTINCT prefix), count(DISTINCT prefix) FILTER (WHERE family = 4), count(DISTINCT prefix) FILTER (WHERE family = 6), count(DISTINCT node_id)
       FROM routing_routes WHERE node_id = ANY($1) AND origin_asn IS NOT NULL GROUP BY origin_asn`,
      [nodeIds],
    );
  });
}

/** The fleet's view before any table: zeros, null RPKI and null time. */
export const NO_FLEET_ROUTING: FleetRouting = { captured_at: null, summary: EMPTY };

/** The fleet's view as of the latest refresh; undefined when no refresh is stored. */
export async function storedFleetRouting(db: Queryable): Promise<FleetRouting | undefined> {
  const { rows } = await db.query(`SELECT summary FROM routing_fleet_observations ORDER BY seq DESC LIMIT 1`);
  return rows[0]?.summary;
}

/** Top origins of the latest refresh. */
export async function fleetTopOrigins(db: Queryable, limit: number, sort: OriginsSort): Promise<FleetOrigin[]> {
  const { rows } = await db.query(`SELECT * FROM routing_fleet_origins ORDER BY ${ORIGIN_ORDER[sort]} LIMIT $1`, [limit]);
  return rows.map((r: Record<string, number | string>) => ({ ...r, asn: Number(r.asn) }) as FleetOrigin);
}
