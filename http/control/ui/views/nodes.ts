import { NODE_TRENDS_WINDOW_HOURS, nodeTrends, type NodeTrends } from '../../../../domain/console/node-trends.js';
import { nodeRate } from '../../../../domain/console/traffic-rates.js';
import { nodeGeo } from '../../../../domain/public/geo.js';
import { needsUpdate } from '../../../../domain/release/rules.js';
import type { Queryable } from '../../../../infra/db/pool.js';
import { targetVersion } from '../../../../infra/releases/store.js';
import { agentStatuses } from '../../../../infra/telemetry/liveness.js';
import { selfMetricsSince, statusPointsSince } from '../../../../infra/telemetry/node-trends.js';
import { allLatestWireguardTraffic, nodeStatus, type NodeStatusRow } from '../../../../infra/telemetry/store.js';
import { getDnsGroup } from '../../../../projections/dns/queries.js';
import type { NodeOut } from '../../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../../shared/context.js';
import { healthLine, latestReports } from '../../health/routes.js';
import { loadFleetSources } from '../../public/facts.js';

/** Whether the agent runs the target version or newer; null when no target is set or the agent reported no version. */
export function agentUpToDate(agentVersion: string | null, target: string | null): boolean | null {
  if (target === null || agentVersion === null) return null;
  return !needsUpdate(agentVersion, target);
}

/** The node record without `base_template` and `inventory` (document 3: the list's scalar fields). */
function nodeFields(node: NodeOut) {
  const { base_template: _template, inventory: _inventory, ...fields } = node;
  return fields;
}

/** `GET /ui/nodes`: every node with health, liveness, agent, drift, BGP session counts, current WireGuard rates and geo, by node id. */
export async function nodeList(ctx: Pick<ServiceContext, 'pool'>, now: Date) {
  const [sources, traffic] = await Promise.all([loadFleetSources(ctx.pool, now), allLatestWireguardTraffic(ctx.pool)]);
  return sources.nodes.map((node, i) => {
    const facts = sources.facts[i];
    const status = sources.status.get(node.node_id);
    const snapshot = status?.snapshot_received_at ? status : undefined;
    const rate = nodeRate(traffic.get(node.node_id), now);
    return {
      ...nodeFields(node),
      health: facts.health,
      liveness: facts.liveness,
      agent_version: facts.agent_version,
      agent_up_to_date: agentUpToDate(facts.agent_version, sources.targetVersion),
      last_heartbeat_at: facts.last_heartbeat_at ? facts.last_heartbeat_at.toISOString() : null,
      drift_count: facts.drift_count,
      peers_up: snapshot ? snapshot.bgp_established : null,
      peers_total: snapshot ? snapshot.bgp_total : null,
      rx_bytes_per_sec: rate.rx_bytes_per_sec,
      tx_bytes_per_sec: rate.tx_bytes_per_sec,
      geo: nodeGeo(node),
    };
  });
}

/**
 * `GET /ui/nodes/{id}/overview`: the node's health line (as `/admin/nodes/{id}/health`)
 * with its latest snapshot, report and apply (null each when never reported: the
 * `unknown` skeleton), plus the full node record, its DNS group, trends and geo.
 */
export async function nodeOverview(ctx: Pick<ServiceContext, 'pool'>, node: NodeOut, now: Date) {
  const [status, [agent], target, group] = await Promise.all([
    nodeStatus(ctx.pool, node.node_id),
    agentStatuses(ctx.pool, [node.node_id]),
    targetVersion(ctx.pool),
    node.dns_group_id === null ? undefined : getDnsGroup(ctx.pool, node.dns_group_id),
  ]);
  const line = healthLine(node, status, agent, now);
  return {
    ...line,
    agent_up_to_date: agentUpToDate(line.agent_version, target),
    drift_count: status?.report ? status.report.drift_items.length : 0,
    ...latestReports(status),
    node,
    dns_group: group ? { id: group.id, name: group.name } : null,
    trends: await trendsOf(ctx.pool, node.node_id, status, now),
    geo: nodeGeo(node),
  };
}

async function trendsOf(db: Queryable, nodeId: string, status: NodeStatusRow | undefined, now: Date): Promise<NodeTrends> {
  const since = new Date(now.getTime() - NODE_TRENDS_WINDOW_HOURS * 3_600_000);
  const [metrics, reports, applies] = await Promise.all([
    selfMetricsSince(db, nodeId, since),
    statusPointsSince(db, nodeId, 'report', since),
    statusPointsSince(db, nodeId, 'apply', since),
  ]);
  const m = status?.snapshot?.self_metrics;
  return nodeTrends({
    currentMetrics:
      m && status?.snapshot_received_at
        ? {
            at: status.snapshot_received_at,
            cpu_percent: m.cpu,
            rss_bytes: m.rss,
            last_routing_collect_seconds: m.last_routing_collect_seconds,
            last_reresolve_seconds: m.last_reresolve_seconds,
          }
        : null,
    metrics,
    currentDrift: status?.report ? status.report.drift_items.length : null,
    reports,
    applies,
    lastApply: { status: status?.last_apply_status ?? null, at: status?.apply_received_at ?? null },
  });
}
