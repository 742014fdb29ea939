import { collapsePrepends } from '../../../agent/telemetry/flaps/views.js';
import type { Random } from './random.js';

/**
 * The flap lab's AS-level world: transit ASes in a sparse mesh, a second tier
 * hanging off them, stub networks below (single- or dual-homed), our nodes
 * (all in one AS, which is never in the graph) each with a few eBGP peers
 * among those ASes, and prefixes originated by the second tier and the stubs.
 * Routing is shortest AS path with each AS breaking ties by its own fixed order
 * of neighbours, so every AS uses one best path and the paths to an origin form
 * a tree, as BGP's would without local policy. Pure.
 */

/** Our AS: the nodes' ASN; paths are reported without it. */
export const OUR_ASN = 4242421080;

export interface LabPrefix {
  prefix: string;
  /** The AS that normally announces it. */
  origin: number;
}

export interface Topology {
  transits: number[];
  tier2: number[];
  stubs: number[];
  /** Neighbours of each AS in its own order of preference (the tie-break between equally short paths). */
  neighbours: Map<number, number[]>;
  /** Our nodes by index: the peer ASes of each one's eBGP sessions. */
  nodes: { peers: number[] }[];
  prefixes: LabPrefix[];
  /** Origins that prepend themselves: how many extra copies the raw path carries (the agent collapses them). */
  prepends: Map<number, number>;
}

export interface TopologyShape {
  nodes: [number, number];
  peersPerNode: [number, number];
  transits: [number, number];
  tier2: [number, number];
  stubs: [number, number];
}

export const DEFAULT_SHAPE: TopologyShape = { nodes: [4, 6], peersPerNode: [3, 5], transits: [9, 13], tier2: [6, 10], stubs: [16, 24] };

export const edgeKey = (a: number, b: number): string => (a < b ? `${a}-${b}` : `${b}-${a}`);

export function generateTopology(rng: Random, shape: TopologyShape = DEFAULT_SHAPE): Topology {
  const used = new Set<number>([OUR_ASN]);
  const asn = () => {
    for (;;) {
      const candidate = 4242420000 + rng.int(1, 3999);
      if (!used.has(candidate)) {
        used.add(candidate);
        return candidate;
      }
    }
  };
  const count = ([lo, hi]: [number, number]) => rng.int(lo, hi);
  const transits = Array.from({ length: count(shape.transits) }, asn);
  const tier2 = Array.from({ length: count(shape.tier2) }, asn);
  const stubs = Array.from({ length: count(shape.stubs) }, asn);
  const links = new Map<number, Set<number>>([...transits, ...tier2, ...stubs].map((a) => [a, new Set<number>()]));
  const link = (a: number, b: number) => {
    if (a === b) return;
    links.get(a)!.add(b);
    links.get(b)!.add(a);
  };
  // Transit mesh: a random spanning tree plus extra links up to about 3.5 links per transit.
  transits.forEach((t, i) => i > 0 && link(t, transits[rng.int(0, i - 1)]));
  const extra = Math.round(transits.length * 0.8);
  for (let i = 0; i < extra; i++) link(rng.pick(transits), rng.pick(transits));
  // Second tier: one or two transit upstreams.
  for (const t of tier2) for (const up of rng.sample(transits, rng.chance(0.5) ? 2 : 1)) link(t, up);
  // Stubs: mostly behind the second tier (deeper paths), single- or dual-homed.
  for (const s of stubs) {
    const homes = rng.chance(0.35) ? 2 : 1;
    for (let i = 0; i < homes; i++) link(s, rng.chance(0.65) ? rng.pick(tier2) : rng.pick(transits));
  }
  const neighbours = new Map([...links].map(([a, set]) => [a, rng.shuffle([...set].sort((x, y) => x - y))]));

  const nodeCount = count(shape.nodes);
  const candidates = [...transits, ...transits, ...tier2, ...stubs.slice(0, 4)];
  const nodes = Array.from({ length: nodeCount }, () => {
    const peers = new Set<number>();
    const want = count(shape.peersPerNode);
    while (peers.size < want) peers.add(rng.pick(candidates));
    return { peers: [...peers] };
  });

  const prefixes: LabPrefix[] = [];
  let v4 = 0;
  let v6 = 0;
  const prefixOf = () =>
    rng.chance(0.6) ? `172.${20 + Math.floor(v4 / 256)}.${v4++ % 256}.0/24` : `fd${(0x40 + v6++).toString(16)}:${rng.int(0x1000, 0xffff).toString(16)}::/48`;
  for (const origin of [...tier2, ...stubs]) {
    const n = rng.int(1, 3);
    for (let i = 0; i < n; i++) prefixes.push({ prefix: prefixOf(), origin });
  }
  for (const origin of transits) if (rng.chance(0.3)) prefixes.push({ prefix: prefixOf(), origin });
  const prepends = new Map<number, number>();
  for (const origin of [...tier2, ...stubs]) if (rng.chance(0.2)) prepends.set(origin, rng.int(1, 3));
  return { transits, tier2, stubs, neighbours, nodes, prefixes, prepends };
}

/**
 * Best paths in the topology with some links down. `path(peer, origins)` is what
 * `peer` sends us for a prefix announced by `origins`: the peer first, the origin
 * last, prepends collapsed (the agent's `as_path`); null when the peer has no
 * route. Next hops are cached per (origins, links down).
 */
export class Routing {
  private readonly cache = new Map<string, Map<number, number>>();

  constructor(private readonly topology: Topology) {}

  path(peer: number, origins: readonly number[], down: ReadonlySet<string>): number[] | null {
    if (origins.length === 0) return null;
    const next = this.nextHops(origins, down);
    if (!next.has(peer)) return null;
    const raw: number[] = [peer];
    let at = peer;
    while (next.get(at) !== at) {
      at = next.get(at)!;
      raw.push(at);
    }
    for (let i = 0; i < (this.topology.prepends.get(at) ?? 0); i++) raw.push(at);
    return collapsePrepends(raw);
  }

  /** Every AS that reaches one of `origins`: its next hop (an origin maps to itself). */
  private nextHops(origins: readonly number[], down: ReadonlySet<string>): Map<number, number> {
    const key = `${[...origins].sort((a, b) => a - b).join(',')}|${[...down].sort().join(',')}`;
    let next = this.cache.get(key);
    if (next) return next;
    const dist = new Map<number, number>(origins.map((o) => [o, 0]));
    const queue = [...origins];
    for (let i = 0; i < queue.length; i++) {
      const at = queue[i];
      for (const n of this.topology.neighbours.get(at) ?? []) {
        if (dist.has(n) || down.has(edgeKey(at, n))) continue;
        dist.set(n, dist.get(at)! + 1);
        queue.push(n);
      }
    }
    next = new Map();
    for (const [at, d] of dist) {
      if (d === 0) next.set(at, at);
      else
        next.set(
          at,
          this.topology.neighbours.get(at)!.find((n) => dist.get(n) === d - 1 && !down.has(edgeKey(at, n)))!,
        );
    }
    if (this.cache.size > 2000) this.cache.clear();
    this.cache.set(key, next);
    return next;
  }
}
