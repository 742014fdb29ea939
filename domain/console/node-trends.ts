import { rssMb } from '../series/units.js';

/**
 * The `trends` block of a node page (document 3, `/ui/nodes/{id}/overview`):
 * the agent's own metrics, drift and apply results over the last
 * `NODE_TRENDS_WINDOW_HOURS`, oldest first. A node that never reported has null
 * `current` values and empty series; `apply.total` and `succeeded` count the
 * window, `last_status` and `last_at` the latest apply ever.
 */
export const NODE_TRENDS_WINDOW_HOURS = 24;

export interface SelfMetricsPoint {
  at: string;
  cpu_percent: number;
  rss_mb: number;
  last_routing_collect_seconds: number | null;
  last_reresolve_seconds: number | null;
}

export interface NodeTrends {
  self_metrics: { current: SelfMetricsPoint | null; series: SelfMetricsPoint[] };
  drift: { current: number | null; series: { at: string; count: number }[] };
  apply: { total: number; succeeded: number; last_status: string | null; last_at: string | null; series: { at: string; status: string }[] };
}

export interface SelfMetricsReading {
  at: Date;
  cpu_percent: number;
  rss_bytes: number;
  last_routing_collect_seconds?: number | null;
  last_reresolve_seconds?: number | null;
}

export const selfMetricsPoint = (m: SelfMetricsReading): SelfMetricsPoint => ({
  at: m.at.toISOString(),
  cpu_percent: m.cpu_percent,
  rss_mb: rssMb(m.rss_bytes),
  last_routing_collect_seconds: m.last_routing_collect_seconds ?? null,
  last_reresolve_seconds: m.last_reresolve_seconds ?? null,
});

export interface TrendInputs {
  /** The latest snapshot's reading; null: none. */
  currentMetrics: SelfMetricsReading | null;
  metrics: readonly SelfMetricsReading[];
  /** Drift items of the latest reconciliation report; null: none. */
  currentDrift: number | null;
  reports: readonly { created_at: Date; drift_count: number | null }[];
  applies: readonly { created_at: Date; status: string | null }[];
  lastApply: { status: string | null; at: Date | null };
}

export function nodeTrends(input: TrendInputs): NodeTrends {
  const applies = input.applies.filter((a): a is { created_at: Date; status: string } => a.status !== null);
  return {
    self_metrics: { current: input.currentMetrics ? selfMetricsPoint(input.currentMetrics) : null, series: input.metrics.map(selfMetricsPoint) },
    drift: { current: input.currentDrift, series: input.reports.map((r) => ({ at: r.created_at.toISOString(), count: r.drift_count ?? 0 })) },
    apply: {
      total: applies.length,
      succeeded: applies.filter((a) => a.status === 'succeeded').length,
      last_status: input.lastApply.status,
      last_at: input.lastApply.at ? input.lastApply.at.toISOString() : null,
      series: applies.map((a) => ({ at: a.created_at.toISOString(), status: a.status })),
    },
  };
}
