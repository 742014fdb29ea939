import { Random } from './random.js';
import { DEFAULT_SHAPE, edgeKey, generateTopology, Routing, type Topology } from './topology.js';

/**
 * Flap lab scenarios: one topology, one fault injected at a known place (the
 * ground truth), and noise around it, on a timeline of world changes. A
 * scenario is a pure function of (seed, index): the same pair gives the same
 * scenario on every machine, whatever ran before.
 */

export const ZONES = ['near', 'origin', 'path', 'moas'] as const;
export type Zone = (typeof ZONES)[number];

/** Where the fault is, as a correct localisation names it. */
export interface GroundTruth {
  zone: Zone;
  /** near: the peer AS of the flapping session; origin: the origin AS; else null. */
  culprit_asn: number | null;
  /** path: the flapping link as it appears in the paths (nearer AS first); else null. */
  culprit_edge: [number, number] | null;
  /** moas: the two origins of the prefix; else null. */
  origins: number[] | null;
}

/** A change of the world at a known time; `cause` says whether it is the fault or noise. */
export type Toggle = { at: number; cause: 'fault' | 'noise' } & (
  | { kind: 'session'; node: number; peer: number; up: boolean }
  | { kind: 'export'; node: number; peer: number; up: boolean }
  | { kind: 'edge'; a: number; b: number; up: boolean }
  | { kind: 'announce'; prefix: string; origin: number; up: boolean }
  | { kind: 'attributes'; node: number; peer: number; prefix: string }
  | { kind: 'bird'; node: number; up: boolean }
);

export interface FeedNoise {
  node: number;
  /** bird-down: BIRD cannot be read (reports say `down`, snapshots have no sessions, then every session restarts); silent: the agent stops reporting. */
  mode: 'bird-down' | 'silent';
  from: number;
  /** When BIRD answers again; null: not before the end. */
  to: number | null;
}

export interface Scenario {
  index: number;
  seed: number;
  topology: Topology;
  start: number;
  /** When the lab reads the views (just after the last reports). */
  end: number;
  faultStart: number;
  truth: GroundTruth;
  /** The prefixes the fault was aimed at (near and path: every prefix whose routes it changes; the simulation finds them). */
  targets: string[];
  /** What the fault is, in words (for reports and failures). */
  description: string;
  toggles: Toggle[];
  /** Churn events of the noise with their own ground truth, by prefix. */
  churn: { prefix: string; truth: GroundTruth }[];
  feed: FeedNoise | null;
  /** A node whose agent predates as_path, announcements, withdrawals and total_changes. */
  oldAgent: number | null;
  /** Per node: ms after each minute at which its flap report goes out, and after the start for its first snapshot (then every 5 minutes). */
  reportOffsets: number[];
  snapshotOffsets: number[];
}

export const MIN = 60_000;
export const REPORT_INTERVAL_MS = MIN;
export const SNAPSHOT_INTERVAL_MS = 5 * MIN;
/** Length of a scenario from the first report to the reading. */
export const SCENARIO_MS = 32 * MIN;
/** Scenario i starts at LAB_EPOCH + i * SCENARIO_SPACING_MS: the server clock only moves forward, and every score of the one before has decayed to nothing. */
export const LAB_EPOCH = Date.parse('2026-11-02T00:00:00Z');
export const SCENARIO_SPACING_MS = 12 * 60 * MIN;

/** The seed of scenario `index` of a run seeded `seed`. */
export function scenarioSeed(seed: number, index: number): number {
  let h = (seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0;
  return (h ^ (h >>> 12)) >>> 0;
}

/** Scenario `index` of a run: the fault kinds take turns (near, origin, path, moas). */
export function generateScenario(seed: number, index: number): Scenario {
  const zone = ZONES[index % ZONES.length];
  const rng = new Random(scenarioSeed(seed, index));
  for (let attempt = 0; ; attempt++) {
    const topology = generateTopology(rng.fork(), DEFAULT_SHAPE);
    const built = buildScenario(rng.fork(), topology, zone, index, seed);
    if (built) return built;
    if (attempt > 20) throw new Error(`flap lab: no ${zone} fault fits scenario ${index} of seed ${seed}`);
  }
}

type Fault = Pick<Scenario, 'truth' | 'targets' | 'description'> & { toggles: Toggle[] };

function buildScenario(rng: Random, topology: Topology, zone: Zone, index: number, seed: number): Scenario | null {
  const start = LAB_EPOCH + index * SCENARIO_SPACING_MS;
  const end = start + SCENARIO_MS;
  const faultStart = start + rng.int(3 * MIN, 8 * MIN);
  // Faults flap at every strength, from a cycle every 40 s to one every 5 minutes (log-uniform).
  const period = Math.round(40_000 * Math.pow(300 / 40, rng.next()));
  const routing = new Routing(topology);
  const window = { from: faultStart, to: end - 30_000 };
  const fault =
    zone === 'near'
      ? nearFault(rng, topology, window, period)
      : zone === 'origin'
        ? originFault(rng, topology, window, period)
        : zone === 'path'
          ? pathFault(rng, topology, routing, window, period)
          : // The conflict must show in every node's last reports: both origins up from 2.5 minutes before the end.
            moasFault(rng, topology, routing, { from: faultStart, to: end - 150_000 }, period);
  if (!fault) return null;
  const nodes = topology.nodes.length;
  const churn = churnNoise(rng, topology, start, end, new Set(zone === 'origin' || zone === 'moas' ? fault.targets : []));
  const feed: FeedNoise | null = rng.chance(0.3)
    ? rng.chance(0.5)
      ? (() => {
          const from = start + rng.int(5 * MIN, SCENARIO_MS - 6 * MIN);
          const to = from + rng.int(2 * MIN, 12 * MIN);
          return { node: rng.int(0, nodes - 1), mode: 'bird-down', from, to: to < end - MIN ? to : null };
        })()
      : { node: rng.int(0, nodes - 1), mode: 'silent', from: start + rng.int(8 * MIN, SCENARIO_MS - 2 * MIN), to: null }
    : null;
  const toggles: Toggle[] = [...fault.toggles, ...churn.toggles];
  if (feed?.mode === 'bird-down') {
    toggles.push({ at: feed.from, cause: 'noise', kind: 'bird', node: feed.node, up: false });
    if (feed.to !== null) toggles.push({ at: feed.to, cause: 'noise', kind: 'bird', node: feed.node, up: true });
  }
  // Stable order: time, then the order of generation (fault before noise at the same instant).
  const ordered = toggles.map((t, i) => ({ t, i })).sort((x, y) => x.t.at - y.t.at || x.i - y.i);
  return {
    index,
    seed,
    topology,
    start,
    end,
    faultStart,
    truth: fault.truth,
    targets: fault.targets,
    description: fault.description,
    toggles: ordered.map((x) => x.t),
    churn: churn.truths,
    feed,
    oldAgent: rng.chance(0.25) ? rng.int(0, nodes - 1) : null,
    reportOffsets: Array.from({ length: nodes }, () => rng.int(1_000, 59_000)),
    snapshotOffsets: Array.from({ length: nodes }, () => rng.int(1_000, 60_000)),
  };
}

/** Down/up cycles of about `period` ms from `from` until `to`; ends up unless `mayEndDown` and a last down fits. */
function flapTimes(rng: Random, from: number, to: number, period: number, mayEndDown: boolean): { at: number; up: boolean }[] {
  const out: { at: number; up: boolean }[] = [];
  let t = from;
  for (;;) {
    const cycle = period * (0.6 + 0.8 * rng.next());
    const down = Math.max(8_000, Math.round(cycle * (0.15 + 0.35 * rng.next())));
    if (t + down > to) break;
    out.push({ at: t, up: false }, { at: t + down, up: true });
    t += Math.round(cycle);
  }
  if (mayEndDown && t < to && rng.chance(0.3)) out.push({ at: t, up: false });
  return out;
}

interface Window {
  from: number;
  to: number;
}

function nearFault(rng: Random, topology: Topology, w: Window, period: number): Fault {
  const node = rng.int(0, topology.nodes.length - 1);
  const peer = rng.pick(topology.nodes[node].peers);
  // Mostly the session itself flaps; now and then it stays up and the peer's routes to this node come and go.
  const kind = rng.chance(0.8) ? 'session' : 'export';
  return {
    truth: { zone: 'near', culprit_asn: peer, culprit_edge: null, origins: null },
    targets: [],
    description: `${kind === 'session' ? 'session' : 'routes over the session'} to AS${peer} at node ${node} flap (period ${Math.round(period / 1000)} s)`,
    toggles: flapTimes(rng, w.from, w.to, period, true).map(({ at, up }) => ({ at, cause: 'fault', kind, node, peer, up })),
  };
}

function originFault(rng: Random, topology: Topology, w: Window, period: number): Fault {
  const origin = rng.pick([...new Set(topology.prefixes.map((p) => p.origin))]);
  const own = topology.prefixes.filter((p) => p.origin === origin).map((p) => p.prefix);
  const targets = own.length > 1 && rng.chance(0.3) ? own : [rng.pick(own)];
  const times = flapTimes(rng, w.from, w.to, period, true);
  return {
    truth: { zone: 'origin', culprit_asn: origin, culprit_edge: null, origins: null },
    targets,
    description: `AS${origin} flaps ${targets.length} of its prefixes (period ${Math.round(period / 1000)} s)`,
    toggles: targets.flatMap((prefix) => times.map(({ at, up }) => ({ at, cause: 'fault' as const, kind: 'announce' as const, prefix, origin, up }))),
  };
}

/** Links crossed by the paths our nodes learn: by link, the directions seen, the origins and nodes behind it, and how often it sits inside the path (neither the peer's link nor the origin's). */
export function crossings(topology: Topology, routing: Routing) {
  const byEdge = new Map<string, { forward: Map<string, number>; origins: Set<number>; nodes: Set<number>; deep: number; total: number }>();
  topology.nodes.forEach(({ peers }, node) => {
    for (const peer of peers) {
      for (const { origin } of topology.prefixes) {
        const path = routing.path(peer, [origin], new Set());
        if (!path) continue;
        for (let j = 0; j + 1 < path.length; j++) {
          const key = edgeKey(path[j], path[j + 1]);
          let e = byEdge.get(key);
          if (!e) byEdge.set(key, (e = { forward: new Map(), origins: new Set(), nodes: new Set(), deep: 0, total: 0 }));
          const dir = `${path[j]}>${path[j + 1]}`;
          e.forward.set(dir, (e.forward.get(dir) ?? 0) + 1);
          e.origins.add(origin);
          e.nodes.add(node);
          e.total++;
          if (j >= 1 && j + 2 < path.length) e.deep++;
        }
      }
    }
  });
  return byEdge;
}

function pathFault(rng: Random, topology: Topology, routing: Routing, w: Window, period: number): Fault | null {
  // Deep in the paths: a link most paths cross after the peer and before the origin, carrying prefixes of at least two origins seen from at least two nodes.
  const candidates = [...crossings(topology, routing)].filter(([, e]) => e.origins.size >= 2 && e.nodes.size >= 2 && e.deep * 2 >= e.total);
  if (candidates.length === 0) return null;
  const [, e] = rng.pick(candidates.sort(([a], [b]) => a.localeCompare(b)));
  const [dir] = [...e.forward].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))[0];
  const [a, b] = dir.split('>').map(Number);
  return {
    truth: { zone: 'path', culprit_asn: null, culprit_edge: [a, b], origins: null },
    targets: [],
    description: `link AS${a}-AS${b} flaps under ${e.origins.size} origins seen from ${e.nodes.size} nodes (period ${Math.round(period / 1000)} s)`,
    toggles: flapTimes(rng, w.from, w.to, period, true).map(({ at, up }) => ({ at, cause: 'fault', kind: 'edge', a, b, up })),
  };
}

function moasFault(rng: Random, topology: Topology, routing: Routing, w: Window, period: number): Fault | null {
  const candidates = [...topology.tier2, ...topology.stubs];
  const owned = topology.prefixes.filter((p) => candidates.includes(p.origin));
  for (let attempt = 0; attempt < 120; attempt++) {
    const { prefix, origin } = rng.pick(owned);
    const second = rng.pick(candidates.filter((c) => c !== origin));
    // A conflict the fleet can see: with both announcing, peer directions at two nodes or more lead to each origin (one node's feed going down does not hide it).
    const nodesTo = new Map<number, Set<number>>();
    topology.nodes.forEach(({ peers }, n) => {
      for (const peer of peers) {
        const to = routing.path(peer, [origin, second], new Set())?.at(-1) ?? 0;
        nodesTo.set(to, (nodesTo.get(to) ?? new Set()).add(n));
      }
    });
    if ((nodesTo.get(origin)?.size ?? 0) < 2 || (nodesTo.get(second)?.size ?? 0) < 2) continue;
    // Both origins' announcements come and go (the conflict oscillates) and both are announcing at the end.
    const first = flapTimes(rng, w.from + 30_000, w.to, period, false);
    const other = flapTimes(rng, w.from + 15_000, w.to, period * (0.7 + 0.6 * rng.next()), false);
    if (first.length < 2 || other.length < 2) continue;
    const announce = (o: number, at: number, up: boolean): Toggle => ({ at, cause: 'fault', kind: 'announce', prefix, origin: o, up });
    return {
      truth: { zone: 'moas', culprit_asn: null, culprit_edge: null, origins: [origin, second].sort((x, y) => x - y) },
      targets: [prefix],
      description: `AS${second} announces ${prefix} of AS${origin}; both announcements flap (period ${Math.round(period / 1000)} s)`,
      toggles: [announce(second, w.from, true), ...first.map((t) => announce(origin, t.at, t.up)), ...other.map((t) => announce(second, t.at, t.up))],
    };
  }
  return null;
}

/** Background churn: a few prefixes with one or two changes each, at one route (near its peer) or everywhere (their origin re-announcing). */
function churnNoise(rng: Random, topology: Topology, start: number, end: number, avoid: ReadonlySet<string>) {
  const toggles: Toggle[] = [];
  const truths: { prefix: string; truth: GroundTruth }[] = [];
  const n = rng.int(2, 8);
  for (let i = 0; i < n; i++) {
    const { prefix, origin } = rng.pick(topology.prefixes);
    if (avoid.has(prefix) || truths.some((t) => t.prefix === prefix)) continue;
    const at = start + rng.int(MIN, SCENARIO_MS - MIN);
    if (rng.chance(0.6)) {
      const node = rng.int(0, topology.nodes.length - 1);
      const peer = rng.pick(topology.nodes[node].peers);
      toggles.push({ at, cause: 'noise', kind: 'attributes', node, peer, prefix });
      if (rng.chance(0.4)) toggles.push({ at: at + rng.int(20_000, 5 * MIN), cause: 'noise', kind: 'attributes', node, peer, prefix });
      truths.push({ prefix, truth: { zone: 'near', culprit_asn: peer, culprit_edge: null, origins: null } });
    } else {
      toggles.push({ at, cause: 'noise', kind: 'announce', prefix, origin, up: false });
      toggles.push({ at: at + rng.int(5_000, 40_000), cause: 'noise', kind: 'announce', prefix, origin, up: true });
      truths.push({ prefix, truth: { zone: 'origin', culprit_asn: origin, culprit_edge: null, origins: null } });
    }
  }
  return { toggles, truths };
}

export { edgeKey };
