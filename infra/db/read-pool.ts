import pg from 'pg';
import type { Logger } from '../logger.js';
import { createPool } from './pool.js';

/**
 * The replica's own view of its replay lag, asked of the standby: 0 while it has
 * replayed all the WAL it received, else the time since the last transaction it
 * replayed was committed on the primary. After a long idle spell on the primary
 * the first new transaction makes that figure jump to the idle time until it is
 * replayed (milliseconds): an overstatement, which only sends reads to the
 * primary for a moment. Null: a standby that has received WAL but replayed no
 * transaction since it started (unknown, not caught up). `standby` false: the
 * URL names a server that is not in recovery (a promoted replica, or the primary
 * itself), which has no lag.
 */
export const READ_REPLICA_LAG_SQL = `SELECT pg_is_in_recovery() AS standby,
  CASE WHEN NOT pg_is_in_recovery() THEN 0
       WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
       ELSE EXTRACT(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8 END AS lag_seconds`;

export type ReadTarget = 'replica' | 'primary';

/** Where the lag-tolerant reads go now, and why. */
export interface ReplicaState {
  target: ReadTarget;
  /** The replica's replay lag at the last check; null: not known (unreachable, nothing replayed yet, not checked yet). */
  lag_seconds: number | null;
  /** false: the URL names a server that is not a standby. */
  standby: boolean | null;
  /** Why reads are on the primary; null while they are on the replica. */
  fallback_reason: string | null;
  checked_at: Date | null;
}

export interface ReadPoolOptions {
  /** Replay lag beyond which reads go to the primary (DATABASE_READ_MAX_LAG). */
  maxLagSeconds: number;
  /** How often the replica's lag and reachability are checked. */
  checkEveryMs?: number;
  log: Logger;
  /** Counts each read by where it went (metrics). */
  onRead?: (target: ReadTarget) => void;
  /** A read the replica refused and the primary answered instead (metrics). */
  onFallback?: (reason: string) => void;
}

/**
 * The read pool when DATABASE_READ_URL names a streaming replica: a pg.Pool that
 * the read routes use like the write pool, whose queries and connections go to
 * the replica while it answers within `maxLagSeconds`, else to the primary.
 *
 * It never writes: only the routes given it (console, public and portal views)
 * use it, and the replica itself refuses a write (25006, read-only
 * transaction). A check every `checkEveryMs` reads the replica's lag
 * (READ_REPLICA_LAG_SQL); a replica that is unreachable or too far behind sends
 * the reads to the primary until a later check finds it back. A read that fails
 * on the replica for want of the replica (connection lost, server shutting
 * down, recovery conflict) is run again on the primary at once, and a lost
 * connection also moves the reads there until the next good check; a read is
 * safe to run twice. A failure inside a transaction the route holds (after
 * `connect()`) is the route's error, as on the primary.
 */
export class ReadPool extends pg.Pool {
  private current: ReplicaState = { target: 'primary', lag_seconds: null, standby: null, fallback_reason: 'not checked yet', checked_at: null };
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<ReplicaState> | undefined;

  constructor(
    readonly replica: pg.Pool,
    readonly primary: pg.Pool,
    private readonly routing: ReadPoolOptions,
  ) {
    // The base pool is never connected: every query and connection is routed to one of the two.
    super({ max: 1 });
  }

  /** A read pool on `url` for the primary `primary`; checked once before it answers, then every `checkEveryMs`. */
  static async open(url: string, primary: pg.Pool, options: ReadPoolOptions, max = 20): Promise<ReadPool> {
    // A replica that does not answer must not hold a request for long: its reads go to the primary.
    const replica = createPool(url, max, { applicationName: 'dn42-control-read', connectionTimeoutMillis: 2_000 });
    const pool = new ReadPool(replica, primary, options);
    await pool.check();
    pool.timer = setInterval(() => void pool.check(), options.checkEveryMs ?? 1_000);
    pool.timer.unref();
    return pool;
  }

  /** Where reads go now. */
  get state(): ReplicaState {
    return { ...this.current };
  }

  /** Reads the replica's lag now and routes the reads by it; one check at a time. */
  check(): Promise<ReplicaState> {
    this.checking ??= this.readLag().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async readLag(): Promise<ReplicaState> {
    const checked_at = new Date();
    try {
      const {
        rows: [row],
      } = await this.replica.query<{ standby: boolean; lag_seconds: number | null }>(READ_REPLICA_LAG_SQL);
      const lag = row.lag_seconds === null ? null : Math.max(0, Number(row.lag_seconds));
      const within = lag !== null && lag <= this.routing.maxLagSeconds;
      this.route({
        target: within ? 'replica' : 'primary',
        lag_seconds: lag,
        standby: row.standby,
        fallback_reason: within ? null : lag === null ? 'replica lag not known yet' : `replica lag ${lag.toFixed(1)} s over ${this.routing.maxLagSeconds} s`,
        checked_at,
      });
    } catch (err) {
      this.route({ target: 'primary', lag_seconds: null, standby: null, fallback_reason: `replica unreachable: ${messageOf(err)}`, checked_at });
    }
    return this.state;
  }

  private route(next: ReplicaState): void {
    if (next.target !== this.current.target) {
      if (next.target === 'primary') this.routing.log.warn({ reason: next.fallback_reason }, 'read replica: reads fall back to the primary');
      else this.routing.log.info({ lag_seconds: next.lag_seconds }, 'read replica: reads back on the replica');
    }
    this.current = next;
  }

  /** A connection failure of the replica: reads go to the primary until the next good check. */
  private lost(err: unknown): void {
    if (this.current.target === 'replica')
      this.route({ ...this.current, target: 'primary', lag_seconds: null, fallback_reason: `replica failed: ${messageOf(err)}` });
  }

  // The overloads of pg.Pool.query all land here; the callback forms are not used in this code base.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const run = (pool: pg.Pool) => (pool.query as (...a: unknown[]) => Promise<unknown>).apply(pool, args);
    if (this.current.target === 'primary') {
      this.routing.onRead?.('primary');
      return run(this.primary);
    }
    this.routing.onRead?.('replica');
    return run(this.replica).catch((err: unknown) => {
      const trouble = replicaTrouble(err);
      if (!trouble) throw err;
      if (trouble === 'lost') this.lost(err);
      this.routing.onFallback?.(trouble);
      this.routing.onRead?.('primary');
      return run(this.primary);
    });
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override connect(...args: any[]): any {
    if (args.length) throw new Error('ReadPool.connect: the callback form is not supported');
    if (this.current.target === 'primary') {
      this.routing.onRead?.('primary');
      return this.primary.connect();
    }
    this.routing.onRead?.('replica');
    return this.replica.connect().catch((err: unknown) => {
      this.lost(err);
      this.routing.onFallback?.('lost');
      this.routing.onRead?.('primary');
      return this.primary.connect();
    });
  }

  /** Stops the checks and closes the replica's connections (the primary belongs to the write side). */
  override async end(): Promise<void> {
    clearInterval(this.timer);
    await this.checking?.catch(() => {});
    await this.replica.end();
    await super.end();
  }
}

/**
 * Whether a failed read is the replica's fault: `lost` (no connection, the
 * server shutting down or refusing connections), `conflict` (a query cancelled
 * by a conflict with recovery, which only a standby raises), or null (the
 * query's own error, which the primary would answer the same).
 */
export function replicaTrouble(err: unknown): 'lost' | 'conflict' | null {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return 'lost'; // ECONNREFUSED, timeouts, "Connection terminated"
  if (code.startsWith('08') || code.startsWith('57P') || code.startsWith('53')) return 'lost';
  if (code === '40001') return 'conflict';
  return null;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The pool a write goes to: a read pool's primary, or the pool itself. For the rare view that writes (a lazily computed read model). */
export function primaryOf(pool: pg.Pool): pg.Pool {
  return pool instanceof ReadPool ? pool.primary : pool;
}
