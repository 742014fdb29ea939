import type { NodeFacts } from '../../../domain/public/facts.js';

/** Facts of one node: an online, placed, published node unless told otherwise. */
export function fact(node_id: string, extra: Partial<NodeFacts> = {}): NodeFacts {
  return {
    node_id,
    asn: 4242420001,
    site: 'fra1',
    labels: {},
    lifecycle: 'active',
    generation: 3,
    health: 'ok',
    liveness: 'online',
    bgp_established: 2,
    table_size: 1000,
    adjacencies: [],
    agent_version: '1.0.200',
    last_heartbeat_at: new Date('2026-11-01T11:59:30Z'),
    drift_count: 0,
    capabilities: ['bird', 'wireguard'],
    ...extra,
  };
}

export const adj = (node_id: string, iface = `wg_${node_id}`, cost = 100) => ({ interface: iface, node_id, cost });
