import type { Registry } from 'prom-client';
import { nodeHealthGauge } from '../../infra/metrics/fleet.js';
import { replicaLagGauge } from '../../infra/metrics/database.js';
import { notificationGauges } from '../../infra/metrics/notifications.js';
import { outboxCounts } from '../../infra/notify/outbox.js';
import { bgpSessionsGauge, flapGauges, ingestLagGauge } from '../../infra/metrics/telemetry.js';
import { snapshotIngestLags } from '../../infra/telemetry/store.js';
import { openFlapAlertCounts } from '../../projections/flap-alerts/queries.js';
import { listNodes } from '../../projections/fleet/queries.js';
import type { ServiceContext } from '../shared/context.js';
import { fleetHealth } from './health/routes.js';
import { flapRateNow } from './ui/flaps/history.js';
import { fleetSessionRows } from './shared/flap-sessions.js';

/**
 * The control service's gauges read from its read models at each scrape (one
 * query or a few each; no writer pays for them): node health, BGP sessions,
 * telemetry ingest lag, flap rate and open flap alerts, the database's
 * replica lag, and the notification outbox. The read-model gauges read through
 * `reads` (the replica of DATABASE_READ_URL: a scrape tolerates its lag). The alert rules of `examples/prometheus/alerts.yml` stand on them.
 */
export function controlGauges(ctx: ServiceContext, reads: ServiceContext, registry: Registry): void {
  nodeHealthGauge(registry, ctx.log, async () => (await fleetHealth(reads)).map((line) => line.health));
  bgpSessionsGauge(registry, ctx.log, async () => await fleetSessionRows(reads.pool, ctx.now()));
  ingestLagGauge(registry, ctx.log, async () => {
    const [lags, nodes] = await Promise.all([snapshotIngestLags(reads.pool), listNodes(reads.pool)]);
    const active = new Set(nodes.filter((n) => n.lifecycle !== 'decommissioned').map((n) => n.node_id));
    return lags.filter((l) => active.has(l.node_id));
  });
  flapGauges(registry, ctx.log, { rate: () => flapRateNow(reads), openAlerts: () => openFlapAlertCounts(reads.pool) });
  // What the primary knows of its standbys: asked of the primary itself.
  replicaLagGauge(registry, ctx.log, ctx.pool);
  notificationGauges(registry, ctx.log, () => outboxCounts(ctx.pool));
}
