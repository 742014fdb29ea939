import { needsUpdate } from '../release/rules.js';
import { NODE_HEALTH_VALUES, type NodeHealth } from '../telemetry/health.js';
import { byString, isActive, undirectedPairs, type Adjacency, type NodeFacts } from './facts.js';
import { placementOf, type Geo } from './geo.js';

/**
 * The fleet overview (document 3, `/ui/fleet/overview`): health, capabilities,
 * agent liveness, geo and the physical WireGuard adjacency of every node.
 * `GET /public/fleet` is the same builder behind an allow-list (`publicFleet`),
 * so the console may add fields to a row without them reaching the public.
 */
export interface FleetRow {
  node_id: string;
  lifecycle: string;
  site: string | null;
  region: number | null;
  geo: Geo | null;
  health: NodeHealth;
  liveness: NodeFacts['liveness'];
  generation: number;
  drift_count: number;
  agent_version: string | null;
  last_heartbeat_at: string | null;
  capabilities: string[];
  adjacencies: Adjacency[];
}

export interface FleetOverview {
  generated_at: string;
  summary: { total: number } & Record<NodeHealth, number>;
  agent_summary: { online: number; stale: number; offline: number; agents_behind: number };
  nodes: FleetRow[];
  /** Adjacent node pairs, `a < b`, deduplicated, sorted. */
  links: { a: string; b: string }[];
}

export interface OverviewOptions {
  generatedAt: Date;
  /** The global agent target version; null: no agent counts as behind. */
  targetVersion: string | null;
}

export function buildFleetOverview(facts: readonly NodeFacts[], options: OverviewOptions): FleetOverview {
  const rows = [...facts].sort((a, b) => byString(a.node_id, b.node_id)).map(fleetRow);
  const count = (pick: (r: FleetRow) => boolean) => rows.filter(pick).length;
  const known = new Set(rows.map((r) => r.node_id));
  const pairs = rows.flatMap((r) => r.adjacencies.filter((a) => known.has(a.node_id)).map((a) => [r.node_id, a.node_id] as const));
  return {
    generated_at: options.generatedAt.toISOString(),
    summary: { total: rows.length, ...(Object.fromEntries(NODE_HEALTH_VALUES.map((h) => [h, count((r) => r.health === h)])) as Record<NodeHealth, number>) },
    agent_summary: {
      online: count((r) => r.liveness === 'online'),
      stale: count((r) => r.liveness === 'stale'),
      offline: count((r) => r.liveness === 'offline'),
      agents_behind: options.targetVersion === null ? 0 : count((r) => needsUpdate(r.agent_version, options.targetVersion!)),
    },
    nodes: rows,
    links: undirectedPairs(pairs).map(([a, b]) => ({ a, b })),
  };
}

function fleetRow(f: NodeFacts): FleetRow {
  const place = placementOf(f.site, f.labels);
  return {
    node_id: f.node_id,
    lifecycle: f.lifecycle,
    site: f.site,
    region: place.region,
    geo: place.geo,
    health: f.health,
    liveness: f.liveness,
    generation: f.generation,
    drift_count: f.drift_count,
    agent_version: f.agent_version,
    last_heartbeat_at: f.last_heartbeat_at ? f.last_heartbeat_at.toISOString() : null,
    capabilities: [...f.capabilities],
    adjacencies: [...f.adjacencies]
      .sort((a, b) => byString(a.interface, b.interface))
      .map((a) => ({ interface: a.interface, node_id: a.node_id, cost: a.cost })),
  };
}

/** The fields of a row `/public/fleet` may show (document 2): never addresses, endpoints, keys or health details. */
export const PUBLIC_FLEET_ROW_FIELDS = [
  'node_id',
  'site',
  'region',
  'geo',
  'health',
  'liveness',
  'generation',
  'drift_count',
  'agent_version',
  'last_heartbeat_at',
  'capabilities',
  'adjacencies',
] as const satisfies readonly (keyof FleetRow)[];

export type PublicFleetRow = Pick<FleetRow, (typeof PUBLIC_FLEET_ROW_FIELDS)[number]>;
export type PublicFleet = Omit<FleetOverview, 'nodes'> & { nodes: PublicFleetRow[] };

/** `GET /public/fleet`: the overview of active nodes, each row cut down to the allow-list. */
export function publicFleet(facts: readonly NodeFacts[], options: OverviewOptions): PublicFleet {
  const overview = buildFleetOverview(facts.filter(isActive), options);
  return { ...overview, nodes: overview.nodes.map((row) => Object.fromEntries(PUBLIC_FLEET_ROW_FIELDS.map((k) => [k, row[k]])) as PublicFleetRow) };
}
