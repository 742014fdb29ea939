import type { Server } from 'node:http';
import type pg from 'pg';
import { limitServer, listenOptions } from '../http/shared/server-limits.js';
import { flushAnonymousRefusals } from '../http/shared/audit.js';
import { createControlApp } from '../http/control/app.js';
import { registerLocalPortalClient } from '../http/control/portal/local-client.js';
import { socketsOf, type ControlSockets } from '../http/control/sockets.js';
import { createIdentityApp } from '../http/identity/app.js';
import { createRegistryApp } from '../http/registry/app.js';
import type { ServiceContext } from '../http/shared/context.js';
import { startSite } from '../http/site/app.js';
import { serviceMetrics } from '../http/shared/metrics.js';
import { allProjections } from '../projections/index.js';
import { ProjectionRuntime } from '../projections/runtime/runtime.js';
import { BackgroundTasks } from '../infra/background.js';
import { dataDirOf, type Config } from '../infra/config.js';
import { startEmbeddedPostgres } from '../infra/db/embedded.js';
import { PgListener } from '../infra/db/listener.js';
import { stateMigrations } from './migrations.js';
import { nobodyConnected } from '../domain/doorbell.js';
import { PgDoorbell } from '../infra/doorbell.js';
import { migrate } from '../infra/db/migrate.js';
import { scheduleSingleton, type SingletonJob } from '../infra/db/singleton.js';
import { createPool } from '../infra/db/pool.js';
import { ReadPool, type ReplicaState } from '../infra/db/read-pool.js';
import { REPLICA_LAG_SQL } from '../infra/metrics/database.js';
import { createEventStore } from '../infra/eventstore/index.js';
import type { EventStore } from '../infra/eventstore/types.js';
import type { Logger } from '../infra/logger.js';
import { registryMigrations } from '../infra/registry/store.js';
import { RegistrySyncer, SYNC_JOB } from '../infra/registry/sync.js';
import { localRoaSource } from '../infra/registry/roa-source.js';
import { Conflict } from '../domain/errors.js';
import { startTelemetryJob } from '../commands/telemetry.js';
import { FLAP_ALERT_JOB_INTERVAL_MS, startFlapAlertJob } from '../commands/flap-alerts.js';
import { setSessionFlapTimeScale } from '../domain/flaps/session.js';
import { notifierDeps, startNotifier } from '../commands/notify/notifier.js';
import { raiseSignal } from '../commands/notify/fanout.js';
import { registrySyncFailed } from '../domain/notify/from-facts.js';
import { localizationOf } from '../domain/notify/from-events.js';
import { prefixLocalization } from '../http/control/ui/views/prefix-flaps.js';
import type { Localize } from '../commands/notify/subscriber.js';
import { pruneRateLimits } from '../infra/rate-limit.js';
import { prunePortal } from '../infra/portal/sessions.js';
import { pruneOutbox } from '../infra/notify/outbox.js';
import { pruneOidcStorage } from '../http/identity/oidc/prune.js';
import { SystemMetrics } from '../infra/metrics/system.js';

/**
 * The composition root: the one module that wires infra, projections and http
 * together. Everything a process runs is built here, from configuration alone.
 */
export interface System {
  config: Config;
  log: Logger;
  databaseUrl: string;
  pool: pg.Pool;
  /** The streaming replica of DATABASE_READ_URL; absent: every read on `pool`. */
  readPool?: ReadPool;
  listener: PgListener;
  store: EventStore;
  projections: ProjectionRuntime;
  context: ServiceContext;
  close(): Promise<void>;
}

export interface OpenOptions {
  migrate?: boolean;
  /** false: a missing embedded cluster is refused (NoCluster) instead of created: read-only commands. */
  createCluster?: boolean;
}

export async function openSystem(config: Config, log: Logger, options: OpenOptions = {}): Promise<System> {
  if (config.flapTimeScale !== 1) {
    setSessionFlapTimeScale(config.flapTimeScale);
    log.warn({ flap_time_scale: config.flapTimeScale }, 'FLAP_TIME_SCALE: session flap scores decay faster than document 3 says (labs and demos only)');
  }
  const embedded = config.databaseUrl ? undefined : await startEmbeddedPostgres(dataDirOf(config), log, { create: options.createCluster });
  const databaseUrl = config.databaseUrl ?? embedded!.url;
  const pool = createPool(databaseUrl, 20);
  const listener = new PgListener(databaseUrl, log);
  let store: EventStore | undefined;
  let projections: ProjectionRuntime;
  try {
    store = await createEventStore(config, pool, listener, log);
    projections = new ProjectionRuntime(store, pool, allProjections, log, config.projectionPollMs);
    if (options.migrate !== false) {
      const report = await migrate(pool, [...stateMigrations, ...projections.migrationSets()]);
      // The replica's tables are a cache of the upstream, not a projection: no rebuild from events.
      report.applied.push(...(await migrate(pool, [registryMigrations])).applied);
      if (report.applied.length) log.info({ applied: report.applied }, 'migrations applied');
    }
    await projections.attach();
  } catch (err) {
    await store?.close().catch(() => {});
    await listener.close().catch(() => {});
    await pool.end().catch(() => {});
    await embedded?.stop().catch(() => {});
    throw err;
  }
  const background = new BackgroundTasks();
  const doorbell = new PgDoorbell(pool, listener, log, nobodyConnected);
  await doorbell.start();
  const metrics = new SystemMetrics(log, { processMetrics: true });
  metrics.watchProjections(() => projections.status());
  const readPool = await openReadPool(config, pool, log, metrics);
  metrics.database.watch(pool, readPool);
  // The services append through the timed store; maintenance commands use `store` as it is.
  const context: ServiceContext = {
    config,
    log,
    pool,
    readPool: readPool ?? pool,
    store: metrics.appends.measure(store),
    projections,
    now: () => new Date(),
    background,
    doorbell,
    metrics,
  };
  const runtime = projections;
  const eventStore = store;
  return {
    config,
    log,
    databaseUrl,
    pool,
    readPool,
    listener,
    store,
    projections,
    context,
    async close() {
      await background.stop();
      doorbell.stop();
      await runtime.stop();
      await eventStore.close();
      await listener.close();
      await readPool?.end();
      await pool.end();
      // Last, after everything that used it; what it says while stopping is of interest only when debugging.
      await embedded?.stop().catch((err: unknown) => log.debug({ err }, 'embedded PostgreSQL stop'));
    },
  };
}

/** The read pool on DATABASE_READ_URL, or none when it is not set (every read on the primary, as before issue 30). */
export async function openReadPool(config: Config, primary: pg.Pool, log: Logger, metrics: SystemMetrics): Promise<ReadPool | undefined> {
  if (!config.databaseReadUrl) return undefined;
  const readPool = await ReadPool.open(config.databaseReadUrl, primary, { maxLagSeconds: config.databaseReadMaxLagSeconds, log, ...metrics.database.counters });
  const { target, lag_seconds, fallback_reason } = readPool.state;
  log.info({ target, lag_seconds, fallback_reason }, 'read replica (DATABASE_READ_URL)');
  return readPool;
}

/** What `projections status` shows of the replicas: the primary's streaming standbys and the read replica's routing. */
export interface ReplicaStatus {
  /** `pg_stat_replication` on the primary (as `dn42_db_replica_lag_seconds`). */
  standbys: { name: string; lag_seconds: number }[];
  /** The replica of DATABASE_READ_URL, checked now; null: not set. */
  read: ReplicaState | null;
}

export async function replicaStatus(system: Pick<System, 'pool' | 'readPool'>): Promise<ReplicaStatus> {
  const [{ rows }, read] = await Promise.all([
    system.pool.query<{ application_name: string; lag_seconds: number }>(REPLICA_LAG_SQL),
    system.readPool ? system.readPool.check() : null,
  ]);
  return { standbys: rows.map((r) => ({ name: r.application_name, lag_seconds: Number(r.lag_seconds) })), read };
}

import { ROLES, type Role } from './roles.js';

export { ROLES, type Role };

export interface Running {
  servers: { role: Role; server: Server; port: number }[];
  stop(): Promise<void>;
}

/** Starts the requested roles in this process (all of them when none is named). */
export async function serve(system: System, roles: readonly Role[]): Promise<Running> {
  const { config, context, log } = system;
  const wanted = new Set<Role>(roles.length ? roles : ROLES);
  const servers: Running['servers'] = [];
  const sockets: ControlSockets[] = [];
  const listen = async (role: Role, app: import('express').Express, port: number) => {
    const server = await new Promise<Server>((resolve, reject) => {
      const s = app.listen(listenOptions(port, config.bindHost), (err?: Error) => (err ? reject(err) : resolve(s)));
      s.once('error', reject);
    });
    limitServer(server);
    const attached = await socketsOf(app, server);
    if (attached) sockets.push(attached);
    const address = server.address();
    const actual = typeof address === 'object' && address ? address.port : port;
    servers.push({ role, server, port: actual });
    log.info({ role, url: `http://${config.bindHost}:${actual}` }, 'listening');
  };
  // A control server next to the replica reads its tables for the ROA set, unless REGISTRY_URL names a replica.
  const roaSource = wanted.has('registry') && config.registryUrl === undefined ? localRoaSource(context.pool) : undefined;
  // With the identity role here too, the portal logs in there with no settings (its client registered idempotently).
  const portal = wanted.has('control') && wanted.has('identity') ? { localClient: await registerLocalPortalClient(context) } : undefined;
  if (wanted.has('control')) await listen('control', createControlApp(context, { roaSource, portal }), config.controlPort);
  if (wanted.has('identity')) await listen('identity', createIdentityApp(context), config.identityPort);
  if (wanted.has('registry')) await listen('registry', createRegistryApp(context), config.registryPort);
  const registrySync = wanted.has('registry') ? startRegistrySync(context) : undefined;
  // After the control server: the site bakes its page from the public map at start,
  // asked of the control server in this process when there is one (the browser still uses CONTROL_URL).
  const control = servers.find((s) => s.role === 'control');
  const site = wanted.has('site')
    ? await startSite(config, log, { mapFrom: control && loopbackUrl(config.bindHost, control.port), metrics: serviceMetrics(context, 'site') })
    : undefined;
  if (site) await listen('site', site.app, config.sitePort);
  if (wanted.has('projections')) system.projections.start();
  const telemetryJob = wanted.has('projections') ? startTelemetryJob(context, context.now) : undefined;
  const flapAlertJob = wanted.has('projections')
    ? startFlapAlertJob(context, context.now, Math.max(1_000, Math.round(FLAP_ALERT_JOB_INTERVAL_MS / config.flapTimeScale)))
    : undefined;
  const housekeeping = wanted.has('projections') ? startHousekeeping(context) : undefined;
  // Notifications (issue 32): any number of instances may run it; the outbox rows and the subscriber's cursor are claimed with SKIP LOCKED.
  const notifier = wanted.has('projections') ? startNotifier(notifierDeps({ ...context, localize: notifyLocalize(context) })) : undefined;
  return {
    servers,
    async stop() {
      site?.stop();
      await registrySync?.stop();
      await telemetryJob?.stop();
      await flapAlertJob?.stop();
      await housekeeping?.stop();
      await notifier?.stop();
      // Agent sockets first: they close with 1001 and take this instance's presence rows along.
      await Promise.all(sockets.map((s) => s.close()));
      await Promise.all(
        servers.map(
          ({ server }) =>
            new Promise<void>((res) => {
              server.close(() => res());
              server.closeAllConnections();
            }),
        ),
      );
      // The minute's counted anonymous refusals (control and identity share the context's bound) would die with the process.
      if (wanted.has('control') || wanted.has('identity')) {
        await flushAnonymousRefusals(context).catch((err: unknown) => log.error({ err }, 'audit aggregate at shutdown failed'));
      }
    },
  };
}

/** The flap page's localisation of a prefix, for the notifications of its alerts. */
export function notifyLocalize(context: ServiceContext): Localize {
  return async (prefix, at) => localizationOf(await prefixLocalization(context, prefix, at));
}

/** `http://host:port` of a service of this process: a wildcard bind address is reached on loopback. */
function loopbackUrl(bindHost: string, port: number): string {
  const host = ['0.0.0.0', '::', ''].includes(bindHost) ? '127.0.0.1' : bindHost;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Prunes state that only ages: rate-limit rows of keys not seen for a day, expired OIDC grants, codes and tokens, expired portal sessions and logins, notifications finished 30 days ago. One instance at a time, every 10 minutes. */
function startHousekeeping(context: ServiceContext): SingletonJob {
  return scheduleSingleton(
    context.pool,
    'housekeeping',
    600_000,
    async () => {
      const rateLimitRows = await pruneRateLimits(context.pool, context.now());
      const oidcRows = await pruneOidcStorage(context.pool, context.now());
      const portalRows = await prunePortal(context.pool, context.now());
      const notificationRows = await pruneOutbox(context.pool, context.now());
      if (rateLimitRows > 0 || oidcRows > 0 || portalRows > 0 || notificationRows > 0)
        context.log.info({ rateLimitRows, oidcRows, portalRows, notificationRows }, 'housekeeping pruned');
    },
    context.log,
  );
}

/**
 * The registry role's periodic sync (REGISTRY_SYNC_INTERVAL, first round at
 * start). It takes the same advisory lock as `POST /registry/v1/sync`, so one
 * instance syncs at a time.
 */
function startRegistrySync(context: ServiceContext): SingletonJob | undefined {
  const { config, log, pool } = context;
  if (!config.registrySource || config.registrySyncIntervalSeconds === 0) return undefined;
  const syncer = new RegistrySyncer(context);
  return scheduleSingleton(
    pool,
    `${SYNC_JOB}:loop`,
    config.registrySyncIntervalSeconds * 1000,
    async () => {
      // A failed round keeps the loaded data; the next tick tries again.
      await syncer.sync({ metadata: { actor: 'registry-sync-loop' } }).catch(async (err) => {
        log[err instanceof Conflict ? 'warn' : 'error']({ err }, 'periodic registry sync failed');
        if (err instanceof Conflict) return;
        await raiseSignal(pool, registrySyncFailed(err instanceof Error ? err.message : String(err), context.now()), {
          floodLimit: config.notifyFloodLimit,
        }).catch((raiseErr: unknown) => log.error({ err: raiseErr }, 'registry sync failure notification failed'));
      });
    },
    log,
  );
}
