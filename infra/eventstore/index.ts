import type pg from 'pg';
import type { Config } from '../config.js';
import type { PgListener } from '../db/listener.js';
import type { Logger } from '../logger.js';
import { PgEventStore } from './postgres/store.js';
import type { EventStore } from './types.js';

export * from './types.js';

/** The configured event store: KurrentDB when `EVENTSTORE_URL` is set, else PostgreSQL. */
export async function createEventStore(config: Config, pool: pg.Pool, listener: PgListener, log: Logger): Promise<EventStore> {
  if (config.eventStoreUrl) {
    const { KurrentEventStore } = await import('./kurrent/store.js');
    return KurrentEventStore.connect(config.eventStoreUrl, log);
  }
  return new PgEventStore({ pool, listener, log, pollIntervalMs: config.projectionPollMs });
}
