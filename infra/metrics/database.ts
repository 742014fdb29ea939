import type { Registry } from 'prom-client';
import type { Queryable } from '../db/pool.js';
import type { Logger } from '../logger.js';
import { sampledGauge } from './sampled.js';

/**
 * What the primary knows of its streaming standbys (`pg_stat_replication`), one
 * row per standby it can see in full. A standby whose positions the database
 * role may not read (`replay_lsn` null: grant it `pg_monitor`) is left out
 * rather than shown as caught up. `replay_lag` is null once a standby has
 * caught up and the primary has been idle for a while: that is 0.
 */
export const REPLICA_LAG_SQL = `SELECT application_name, COALESCE(EXTRACT(epoch FROM replay_lag), 0)::float8 AS lag_seconds
  FROM pg_stat_replication WHERE replay_lsn IS NOT NULL ORDER BY application_name`;

/**
 * `dn42_db_replica_lag_seconds{replica}`: replay lag of each streaming standby of
 * the database the server writes to, read from the primary at each scrape. No
 * standby (the server reads nothing from a replica yet): no samples.
 */
export function replicaLagGauge(registry: Registry, log: Logger, db: Queryable): void {
  sampledGauge(registry, log, {
    name: 'dn42_db_replica_lag_seconds',
    help: "replay lag of each streaming standby of the server's PostgreSQL (pg_stat_replication on the primary, by application_name); no samples: no standby",
    labelNames: ['replica'],
    read: async () => {
      const { rows } = await db.query<{ application_name: string; lag_seconds: number }>(REPLICA_LAG_SQL);
      return rows.map((r) => ({ labels: { replica: r.application_name }, value: Number(r.lag_seconds) }));
    },
  });
}
