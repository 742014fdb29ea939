import type { NodeFacts } from '../../../domain/public/facts.js';
import { deriveHealth } from '../../../domain/telemetry/health.js';
import type { Queryable } from '../../../infra/db/pool.js';
import { targetVersion } from '../../../infra/releases/store.js';
import { agentStatuses, livenessOf, type AgentStatus } from '../../../infra/telemetry/liveness.js';
import { allNodeStatus, latestDriftCounts, latestTableSizes, type NodeStatusRow } from '../../../infra/telemetry/store.js';
import { listNodes, publishedAdjacencies, type NodeOut } from '../../../projections/fleet/queries.js';

export interface FleetFacts {
  facts: NodeFacts[];
  targetVersion: string | null;
}

/** What the fleet views read, one query per source; `facts` lines up with `nodes` (by node id). */
export interface FleetSources extends FleetFacts {
  nodes: NodeOut[];
  status: Map<string, NodeStatusRow>;
  agents: Map<string, AgentStatus>;
}

/**
 * Reads what the public views and the console's fleet views are computed from,
 * one query per source (node records, health inputs, liveness, routing tables,
 * reports, published adjacency), and derives health and liveness at `now` as
 * the admin views do.
 */
export async function loadFleetSources(db: Queryable, now: Date): Promise<FleetSources> {
  const [nodes, status, agentList, tables, drift, adjacencies, target] = await Promise.all([
    listNodes(db),
    allNodeStatus(db),
    agentStatuses(db),
    latestTableSizes(db),
    latestDriftCounts(db),
    publishedAdjacencies(db),
    targetVersion(db),
  ]);
  const agents = new Map(agentList.map((a) => [a.node_id, a]));
  const facts = nodes.map((n): NodeFacts => {
    const s = status.get(n.node_id);
    const agent = agents.get(n.node_id);
    return {
      node_id: n.node_id,
      asn: n.asn,
      site: n.site,
      labels: n.labels,
      lifecycle: n.lifecycle,
      generation: n.current_generation,
      health: s ? deriveHealth(s, now).health : 'unknown',
      liveness: livenessOf(agent?.last_seen ?? null, now),
      bgp_established: s?.snapshot_received_at ? s.bgp_established : 0,
      table_size: tables.get(n.node_id) ?? null,
      adjacencies: adjacencies.get(n.node_id) ?? [],
      agent_version: agent?.agent_version ?? null,
      last_heartbeat_at: agent?.last_seen ?? null,
      drift_count: drift.get(n.node_id) ?? 0,
      capabilities: capabilitiesOf(n.inventory),
    };
  });
  return { facts, targetVersion: target, nodes, status, agents };
}

export async function loadFleetFacts(db: Queryable, now: Date): Promise<FleetFacts> {
  const { facts, targetVersion } = await loadFleetSources(db, now);
  return { facts, targetVersion };
}

/** The capabilities the agent reported at registration (strings only). */
function capabilitiesOf(inventory: Record<string, unknown>): string[] {
  const raw = inventory.capabilities;
  return Array.isArray(raw) ? raw.filter((c): c is string => typeof c === 'string') : [];
}
