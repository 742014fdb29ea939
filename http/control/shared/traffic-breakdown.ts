import { nodeRate, sumRates, type PeerRate, type Rates } from '../../../domain/console/traffic-rates.js';
import { byString } from '../../../domain/public/facts.js';
import { nodeGeo, type Geo } from '../../../domain/public/geo.js';
import { allLatestWireguardTraffic } from '../../../infra/telemetry/store.js';
import { interfacePeerings, listNodes, type LinkPeering } from '../../../projections/fleet/queries.js';
import type { ServiceContext } from '../../shared/context.js';

export interface BreakdownOptions {
  /** Peers listed, fleet-wide, by current rate (document 3: 1 to 200, default 25). */
  peersLimit: number;
  /** Nodes listed by current rate; the rest are summed into `other`. */
  breakdownTop: number;
}

export const BREAKDOWN_DEFAULTS: BreakdownOptions = { peersLimit: 25, breakdownTop: 10 };

export interface BreakdownNode extends Rates {
  node_id: string;
  geo: Geo | null;
  sampled_at: string | null;
  interval_seconds: number | null;
  peer_count: number;
}

export interface BreakdownPeer extends PeerRate {
  node_id: string;
  geo: Geo | null;
  peering: LinkPeering | null;
}

export interface TrafficBreakdown {
  generated_at: string;
  totals: Rates;
  nodes: BreakdownNode[];
  other: Rates & { node_count: number };
  peers: BreakdownPeer[];
  peer_total: number;
}

const total = (r: Rates) => (r.rx_bytes_per_sec ?? 0) + (r.tx_bytes_per_sec ?? 0);

/** Busiest first; rows without a rate last; then by name, so equal rows keep one order. */
function byRate<T extends Rates>(key: (row: T) => string) {
  return (a: T, b: T) => Number(a.rx_bytes_per_sec === null) - Number(b.rx_bytes_per_sec === null) || total(b) - total(a) || byString(key(a), key(b));
}

/**
 * `GET /ui/fleet/traffic-breakdown`, and the dashboard's `traffic_breakdown`
 * block: current WireGuard rates per node (every node; the top `breakdownTop`
 * listed, the rest summed into `other`) and per peer (the top `peersLimit`
 * fleet-wide), from each node's latest two light samples. A counter reset counts
 * from zero (`domain/telemetry/rates.ts`).
 */
export async function buildTrafficBreakdown(
  ctx: Pick<ServiceContext, 'pool'>,
  now: Date,
  options: BreakdownOptions = BREAKDOWN_DEFAULTS,
): Promise<TrafficBreakdown> {
  const [nodes, samples, peerings] = await Promise.all([listNodes(ctx.pool), allLatestWireguardTraffic(ctx.pool), interfacePeerings(ctx.pool)]);
  const rows: BreakdownNode[] = [];
  const peers: BreakdownPeer[] = [];
  for (const n of nodes) {
    const rate = nodeRate(samples.get(n.node_id), now);
    const geo = nodeGeo(n);
    rows.push({
      node_id: n.node_id,
      geo,
      sampled_at: rate.sampled_at,
      interval_seconds: rate.interval_seconds,
      rx_bytes_per_sec: rate.rx_bytes_per_sec,
      tx_bytes_per_sec: rate.tx_bytes_per_sec,
      peer_count: rate.peers.length,
    });
    const linked = peerings.get(n.node_id);
    for (const p of rate.peers) peers.push({ node_id: n.node_id, geo, ...p, peering: linked?.get(p.interface) ?? null });
  }
  rows.sort(byRate((r) => r.node_id));
  peers.sort(byRate((p) => `${p.node_id}\u0000${p.interface}\u0000${p.public_key ?? ''}`));
  const rest = rows.slice(options.breakdownTop);
  return {
    generated_at: now.toISOString(),
    totals: sumRates(rows),
    nodes: rows.slice(0, options.breakdownTop),
    other: { node_count: rest.length, ...sumRates(rest) },
    peers: peers.slice(0, options.peersLimit),
    peer_total: peers.length,
  };
}
