import type { Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import type { OutboxCounts } from '../notify/outbox.js';
import { sampledGauge } from './sampled.js';

/**
 * The notification outbox (issue 32), read at scrape time:
 * `dn42_notifications{status}` counts notifications waiting (`queued`: never
 * tried, `attempted`: to be retried) and given up (`failed`, kept 30 days);
 * `dn42_notification_channels_paused` the channels paused after failures or by hand.
 */
export function notificationGauges(registry: Registry, log: Logger, read: () => Promise<OutboxCounts>): void {
  sampledGauge(registry, log, {
    name: 'dn42_notifications',
    help: 'notifications in the outbox by status: queued (not tried yet), attempted (to be retried), failed (given up after 24 h)',
    labelNames: ['status'],
    read: async () => {
      const c = await read();
      return (['queued', 'attempted', 'failed'] as const).map((status) => ({ labels: { status }, value: c[status] }));
    },
  });
  sampledGauge(registry, log, {
    name: 'dn42_notification_channels_paused',
    help: 'notification channels paused (after repeated failed deliveries, or by hand)',
    read: async () => [{ labels: {}, value: (await read()).paused_channels }],
  });
}
