import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Express } from 'express';
import type pg from 'pg';
import type { ServiceContext } from '../../http/shared/context.js';
import { BackgroundTasks } from '../../infra/background.js';
import { loadConfig, type Config } from '../../infra/config.js';
import { PgListener } from '../../infra/db/listener.js';
import { stateMigrations } from '../../cli/migrations.js';
import type { Delivery, DoorbellBroadcaster, DoorbellEvent } from '../../domain/doorbell.js';
import { PgDoorbell } from '../../infra/doorbell.js';
import { migrate } from '../../infra/db/migrate.js';
import { createPool } from '../../infra/db/pool.js';
import { PgEventStore } from '../../infra/eventstore/postgres/store.js';
import { createLogger, type Logger } from '../../infra/logger.js';
import { allProjections } from '../../projections/index.js';
import type { Projection } from '../../projections/runtime/projection.js';
import { projectionMigrationSets, ProjectionRuntime } from '../../projections/runtime/runtime.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { socketsOf, type ControlSockets } from '../../http/control/sockets.js';
import { listenOptions } from '../../http/shared/server-limits.js';
import { SystemMetrics } from '../../infra/metrics/system.js';
import { openReadPool } from '../../cli/system.js';
import type { ReadPool } from '../../infra/db/read-pool.js';

/** A test clock: starts at a fixed instant and moves only when told. */
export class TestClock {
  constructor(public current = new Date('2026-11-01T12:00:00Z')) {}
  now = (): Date => new Date(this.current);
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/** The test double of the agent channel: records every doorbell; `online` nodes count as one connected agent. */
export class RecordingBroadcaster implements DoorbellBroadcaster {
  readonly calls: DoorbellEvent[] = [];
  readonly online = new Set<string>();
  /** The `desired_state_updated` events among the calls. */
  get published(): Extract<DoorbellEvent, { type: 'desired_state_updated' }>[] {
    return this.calls.filter((c): c is Extract<DoorbellEvent, { type: 'desired_state_updated' }> => c.type === 'desired_state_updated');
  }
  deliver(event: DoorbellEvent): Delivery {
    this.calls.push(event);
    const n = this.online.has(event.node_id) ? 1 : 0;
    return { node_id: event.node_id, subscribers: n, delivered: n };
  }
}

export interface TestSystem {
  db: TestDatabase;
  config: Config;
  log: Logger;
  pool: pg.Pool;
  /** The read pool when `env` sets DATABASE_READ_URL. */
  readPool?: ReadPool;
  listener: PgListener;
  store: PgEventStore;
  projections: ProjectionRuntime;
  clock: TestClock;
  context: ServiceContext;
  doorbell: PgDoorbell;
  /** What the doorbell handed to this process's (absent) agent connections. */
  broadcaster: RecordingBroadcaster;
  close(): Promise<void>;
}

export interface TestSystemOptions {
  env?: Record<string, string>;
  projections?: readonly Projection[];
  pollIntervalMs?: number;
  /** A second server instance: share this database (not created, not dropped by this system). */
  database?: TestDatabase;
}

/** A whole system on a fresh database (a copy of the migrated template): store, projections attached, a test clock. */
export async function createTestSystem(options: TestSystemOptions = {}): Promise<TestSystem> {
  const projectionList = options.projections ?? allProjections;
  const sets = [...stateMigrations, ...projectionMigrationSets(projectionList)];
  const db = options.database ? { ...options.database, drop: async () => {} } : await createTestDatabase(sets);
  // The specs' clients connect over loopback and play the edge proxy with forwarding headers.
  const config = loadConfig({
    TRUSTED_PROXIES: '127.0.0.1,::1,10.0.0.0/8',
    ...options.env,
    DATABASE_URL: db.url,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  });
  const log = createLogger(config.logLevel);
  const pool = createPool(db.url, 30);
  const listener = new PgListener(db.url, log);
  const store = new PgEventStore({ pool, listener, log, pollIntervalMs: options.pollIntervalMs ?? 200 });
  const projections = new ProjectionRuntime(store, pool, projectionList, log, options.pollIntervalMs ?? 200);
  await migrate(pool, sets); // nothing left to apply on a copy of the template; a shared database may need it
  await projections.attach();
  const clock = new TestClock();
  const broadcaster = new RecordingBroadcaster();
  const doorbell = new PgDoorbell(pool, listener, log, broadcaster);
  await doorbell.start();
  // A registry of its own (no process series: a spec process starts hundreds of systems); the services append through the timed store.
  const metrics = new SystemMetrics(log);
  metrics.watchProjections(() => projections.status());
  // DATABASE_READ_URL in `env`: the read pool on that replica, as `serve` makes it.
  const readPool = await openReadPool(config, pool, log, metrics);
  metrics.database.watch(pool, readPool);
  const context: ServiceContext = {
    config,
    log,
    pool,
    readPool: readPool ?? pool,
    store: metrics.appends.measure(store),
    projections,
    now: clock.now,
    background: new BackgroundTasks(),
    doorbell,
    metrics,
  };
  return {
    db,
    config,
    log,
    pool,
    readPool,
    listener,
    store,
    projections,
    clock,
    context,
    doorbell,
    broadcaster,
    async close() {
      await context.background.stop();
      doorbell.stop();
      await projections.stop();
      await listener.close();
      await readPool?.end();
      await pool.end();
      await db.drop();
    },
  };
}

/**
 * Starts an Express app on a loopback port (ephemeral unless `port` names one, e.g.
 * when a URL setting must name it before the app listens); a control app gets its
 * agent WebSockets (`sockets`).
 */
export async function startApp(app: Express, port = 0): Promise<{ url: string; sockets?: ControlSockets; close(): Promise<void> }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(listenOptions(port, '127.0.0.1'), () => resolve(s));
  });
  const { port: bound } = server.address() as AddressInfo;
  const sockets = await socketsOf(app, server);
  return {
    url: `http://127.0.0.1:${bound}`,
    sockets,
    close: async () => {
      await sockets?.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
