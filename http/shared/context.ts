import type pg from 'pg';
import type { Doorbell } from '../../domain/doorbell.js';
import type { BackgroundTasks } from '../../infra/background.js';
import type { Config } from '../../infra/config.js';
import type { EventStore } from '../../infra/eventstore/types.js';
import type { Logger } from '../../infra/logger.js';
import type { SystemMetrics } from '../../infra/metrics/system.js';
import type { ProjectionRuntime } from '../../projections/runtime/runtime.js';

/** What every service's app is built from. Time comes from `now` so tests can move it. */
export interface ServiceContext {
  config: Config;
  log: Logger;
  pool: pg.Pool;
  /**
   * Where the reads that tolerate lag go (console views, public map and fleet,
   * portal views): the streaming replica of DATABASE_READ_URL (falling back to
   * the primary), or `pool` itself without one. Never for a write, an
   * authentication check, or the answer to a client's own write.
   */
  readPool: pg.Pool;
  store: EventStore;
  projections: ProjectionRuntime;
  now: () => Date;
  /** Work that outlives its request; drained on shutdown. */
  background: BackgroundTasks;
  /** Tells connected agents about new generations (after commit). */
  doorbell: Doorbell;
  /** The system's metrics; each service app adds its own registry (`metrics.service(name)`). */
  metrics: SystemMetrics;
}

/**
 * The context for routes and views that only read and tolerate lag: its `pool`
 * is the read pool (the replica of DATABASE_READ_URL, else the write pool
 * itself, when this is `ctx` unchanged). Authentication stays on `ctx`.
 */
export function readsOf(ctx: ServiceContext): ServiceContext {
  return ctx.readPool === ctx.pool ? ctx : { ...ctx, pool: ctx.readPool };
}
