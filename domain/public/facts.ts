import type { NodeHealth } from '../telemetry/health.js';

/**
 * What the public views (and the console fleet overview) are computed from, one
 * entry per node record: configuration, derived health and liveness, the latest
 * observations and the published WireGuard adjacency. The loader reads it; the
 * builders are pure functions of it, so what they may reveal is decided here
 * and in their allow-lists, not in SQL.
 */
export interface NodeFacts {
  node_id: string;
  asn: number;
  site: string | null;
  labels: Record<string, unknown>;
  lifecycle: string;
  /** The node's current desired-state generation (0: never published). */
  generation: number;
  health: NodeHealth;
  liveness: 'online' | 'stale' | 'offline';
  /** Established BGP sessions (iBGP and eBGP) of the latest runtime snapshot; 0 without one. */
  bgp_established: number;
  /** Routes of the latest routing-table observation; null without one. */
  table_size: number | null;
  /** Internal WireGuard links of the published desired state (`bird.internal_topology.adjacencies`). */
  adjacencies: Adjacency[];
  agent_version: string | null;
  last_heartbeat_at: Date | null;
  /** Drift items of the latest reconciliation report; 0 when unreported. */
  drift_count: number;
  capabilities: string[];
}

export interface Adjacency {
  interface: string;
  node_id: string;
  cost: number;
}

/** `ok` and `degraded` nodes carry traffic; the public views count them as online. */
export const isOnline = (f: Pick<NodeFacts, 'health'>): boolean => f.health === 'ok' || f.health === 'degraded';

export const isActive = (f: Pick<NodeFacts, 'lifecycle'>): boolean => f.lifecycle === 'active';

export const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Undirected pairs: ordered `a < b`, without self-loops, deduplicated, sorted. */
export function undirectedPairs(pairs: Iterable<readonly [string, string]>): [string, string][] {
  const seen = new Map<string, [string, string]>();
  for (const [x, y] of pairs) {
    if (x === y) continue;
    const pair: [string, string] = x < y ? [x, y] : [y, x];
    seen.set(`${pair[0]}\u0000${pair[1]}`, pair);
  }
  return [...seen.values()].sort((p, q) => byString(p[0], q[0]) || byString(p[1], q[1]));
}
