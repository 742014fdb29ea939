import type pg from 'pg';
import { Counter, type Registry } from 'prom-client';
import type { Queryable } from '../db/pool.js';
import type { ReadPool, ReadPoolOptions } from '../db/read-pool.js';
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

/**
 * The metrics of the two pools (issue 30): the connections of the write pool and
 * of the read pool, where the lag-tolerant reads went (`dn42_db_reads_total`;
 * only with DATABASE_READ_URL), the reads the replica failed and the primary
 * answered, and the read replica's own view of its lag and whether the reads
 * are on it, as of its last check (no query at scrape time).
 */
export class DatabaseMetrics {
  private readonly reads: Counter<'target'>;
  private readonly fallbacks: Counter<'reason'>;
  private pools: { write?: PoolCounts; read?: ReadPool } = {};

  constructor(registry: Registry, log: Logger) {
    this.reads = new Counter({
      name: 'dn42_db_reads_total',
      help: 'lag-tolerant reads (queries and transactions of the console, public and portal views) by where they went; only with DATABASE_READ_URL',
      labelNames: ['target'],
      registers: [registry],
    });
    this.fallbacks = new Counter({
      name: 'dn42_db_read_fallbacks_total',
      help: 'reads the read replica failed (lost: connection; conflict: cancelled by recovery) and the primary answered',
      labelNames: ['reason'],
      registers: [registry],
    });
    sampledGauge(registry, log, {
      name: 'dn42_db_pool_connections',
      help: 'connections of the write pool and of the read pool (DATABASE_READ_URL) by state: idle, busy, and requests waiting for one',
      labelNames: ['pool', 'state'],
      read: () =>
        (['write', 'read'] as const).flatMap((name) => {
          const pool = name === 'read' ? this.pools.read?.replica : this.pools.write;
          if (!pool) return [];
          return [
            { labels: { pool: name, state: 'idle' }, value: pool.idleCount },
            { labels: { pool: name, state: 'busy' }, value: pool.totalCount - pool.idleCount },
            { labels: { pool: name, state: 'waiting' }, value: pool.waitingCount },
          ];
        }),
    });
    sampledGauge(registry, log, {
      name: 'dn42_db_read_replica_lag_seconds',
      help: 'replay lag of the read replica (DATABASE_READ_URL) as it reports it at the last check (at most a second old); no sample: no read replica, or its lag not known (unreachable)',
      read: () => {
        const lag = this.pools.read?.state.lag_seconds;
        return lag === undefined || lag === null ? [] : [{ labels: {}, value: lag }];
      },
    });
    sampledGauge(registry, log, {
      name: 'dn42_db_read_replica_in_use',
      help: 'whether the lag-tolerant reads go to the read replica (1) or fell back to the primary (0: replica unreachable or over DATABASE_READ_MAX_LAG); no sample: no read replica',
      read: () => (this.pools.read ? [{ labels: {}, value: this.pools.read.state.target === 'replica' ? 1 : 0 }] : []),
    });
  }

  /** What the read pool reports as it routes (ReadPool options). */
  get counters(): Required<Pick<ReadPoolOptions, 'onRead' | 'onFallback'>> {
    return { onRead: (target) => this.reads.inc({ target }), onFallback: (reason) => this.fallbacks.inc({ reason }) };
  }

  /** The pools whose connections and replica state the gauges show. */
  watch(write: PoolCounts, read?: ReadPool): void {
    this.pools = { write, read };
  }
}

type PoolCounts = Pick<pg.Pool, 'totalCount' | 'idleCount' | 'waitingCount'>;
