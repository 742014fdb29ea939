import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import { DatabaseMetrics } from './database.js';
import { AppendMetrics } from './event-store.js';
import { sampledGauge } from './sampled.js';
import { ServiceMetrics } from './service.js';

/** What the projection lag gauge reads of each projection (the runtime's `status()` lines). */
export interface ProjectionLag {
  name: string;
  mode: string;
  /** Events not yet applied; null: not known. */
  lag_events: number | null;
}

/**
 * The metrics of one system: what the services of a process share (the event
 * store, the projections, the process itself). Each system has a registry of its
 * own, never prom-client's global one, so that several systems in one process
 * (the specs start many) do not collide. Each service adds its own registry
 * (`service()`); a service's `/metrics` answers both.
 */
export class SystemMetrics {
  readonly registry = new Registry();
  readonly appends: AppendMetrics;
  /** The write and read pools (issue 30). */
  readonly database: DatabaseMetrics;
  private projections: (() => Promise<readonly ProjectionLag[]>) | undefined;

  constructor(
    readonly log: Logger,
    options: { processMetrics?: boolean } = {},
  ) {
    // The process's own series (CPU, memory, event loop lag, GC): once per process, not per test system.
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
    this.appends = new AppendMetrics(this.registry);
    this.database = new DatabaseMetrics(this.registry, log);
    sampledGauge(this.registry, log, {
      name: 'dn42_projection_lag_events',
      help: 'events a projection has not applied yet (async: behind the head; inline: history appended while nothing applied it)',
      labelNames: ['projection', 'mode'],
      read: async () =>
        ((await this.projections?.()) ?? [])
          .filter((p) => p.lag_events !== null)
          .map((p) => ({ labels: { projection: p.name, mode: p.mode }, value: p.lag_events! })),
    });
  }

  /** Where the projection lag is read at each scrape (the projection runtime's status). */
  watchProjections(read: () => Promise<readonly ProjectionLag[]>): void {
    this.projections = read;
  }

  /** A new registry for one service's own series (its HTTP requests and what only it knows). */
  service(name: string): ServiceMetrics {
    return new ServiceMetrics(name, this.registry);
  }
}
