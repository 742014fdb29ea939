import type { Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import { sampledGauge } from './sampled.js';

/**
 * `dn42_registry_sync_age_seconds`: time since the replica last completed a sync
 * round (a load, or a check that found upstream unchanged). A replica that never
 * synced is infinitely old (`+Inf`), so an alert on the age fires for it too.
 */
export function registrySyncAgeGauge(registry: Registry, log: Logger, lastRound: () => Promise<Date | null>, now: () => Date): void {
  sampledGauge(registry, log, {
    name: 'dn42_registry_sync_age_seconds',
    help: 'seconds since the registry replica last completed a sync round; +Inf: it never synced',
    read: async () => {
      const at = await lastRound();
      return [{ labels: {}, value: at ? Math.max(0, (now().getTime() - at.getTime()) / 1000) : Number.POSITIVE_INFINITY }];
    },
  });
}
