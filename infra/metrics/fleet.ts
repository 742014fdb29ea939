import type { Registry } from 'prom-client';
import { NODE_HEALTH_VALUES, type NodeHealth } from '../../domain/telemetry/health.js';
import type { Logger } from '../logger.js';
import { sampledGauge } from './sampled.js';

/** `dn42_nodes{health}`: how many nodes have each health now (every value present, 0 included), as `/admin/health` derives it. */
export function nodeHealthGauge(registry: Registry, log: Logger, read: () => Promise<readonly NodeHealth[]>): void {
  sampledGauge(registry, log, {
    name: 'dn42_nodes',
    help: 'nodes by health derived now (ok, degraded, stale, down, unknown), as GET /control/v1/admin/health counts them',
    labelNames: ['health'],
    read: async () => {
      const healths = await read();
      return NODE_HEALTH_VALUES.map((health) => ({ labels: { health }, value: healths.filter((h) => h === health).length }));
    },
  });
}
