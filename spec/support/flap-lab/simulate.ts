import { FlapCollector } from '../../../agent/telemetry/flaps/collector.js';
import { hash53, type RouteView } from '../../../agent/telemetry/flaps/views.js';
import type { BgpState, PrefixFlaps, RuntimeSnapshot } from '../../../domain/telemetry/reports.js';
import { Random } from './random.js';
import { REPORT_INTERVAL_MS, SNAPSHOT_INTERVAL_MS, type Scenario, type Toggle } from './scenarios.js';
import { edgeKey, OUR_ASN, Routing } from './topology.js';

/**
 * Runs a scenario's world forward in time and produces what our nodes' agents
 * would send: a runtime snapshot every 5 minutes (BGP sessions with state,
 * `since` and remote AS) and a prefix flap report every 60 s. The flap reports
 * come from the agent's own collector (`FlapCollector.observeParsed`): each
 * look hands it the node's BGP routes (one per prefix and session) and the
 * sessions' import counters, as `birdc` would show them, so scores, weights,
 * counts and the report format are the agent's. Pure and deterministic.
 */

export interface LabPost {
  at: number;
  node: number;
  kind: 'runtime-snapshot' | 'prefix-flaps';
  body: RuntimeSnapshot | PrefixFlaps;
}

/** Where a prefix's routes changed: `node:peer` directions, by cause. */
export interface PrefixTrace {
  fault: Set<string>;
  noise: Set<string>;
}

export interface Simulation {
  posts: LabPost[];
  /** Prefixes whose routes the fault changed (at some node, over some session) and the noise did not. */
  faulted: string[];
  /** Prefixes both the fault and the noise changed (left out of the scoring). */
  mixed: string[];
  traces: Map<string, PrefixTrace>;
}

interface Session {
  peer: number;
  name: string;
  /** The BGP session is established. */
  up: boolean;
  /** The peer sends us its routes (a near fault may stop that with the session up). */
  exporting: boolean;
  state: BgpState;
  since: number;
  /** BIRD's import updates plus withdrawals since the session came up. */
  counter: number;
}

interface Route {
  path: number[];
  salt: number;
  view: RouteView;
}

interface NodeSim {
  id: string;
  sessions: Session[];
  routes: Map<string, Route>;
  collector: FlapCollector;
  birdDown: boolean;
}

const routeKey = (prefix: string, session: string) => `${prefix}\t${session}`;
const iso = (ms: number) => new Date(ms).toISOString();
const DOWN_STATES: BgpState[] = ['active', 'connect', 'idle'];

export function simulate(scenario: Scenario, nodeIds: readonly string[]): Simulation {
  const { topology } = scenario;
  const rng = new Random(scenario.seed ^ 0x5eed);
  const routing = new Routing(topology);
  const down = new Set<string>();
  const announcing = new Map(topology.prefixes.map((p) => [p.prefix, [p.origin]]));
  const salts = new Map<string, number>();
  const traces = new Map<string, PrefixTrace>();
  const nodes: NodeSim[] = topology.nodes.map(({ peers }, i) => ({
    id: nodeIds[i],
    sessions: peers.map((peer) => ({
      peer,
      name: `ebgp_as${peer}`,
      up: true,
      exporting: true,
      state: 'established',
      since: scenario.start - rng.int(3_600_000, 30 * 86_400_000),
      counter: 0,
    })),
    routes: new Map(),
    collector: new FlapCollector(),
    birdDown: false,
  }));

  const trace = (prefix: string, node: number, peer: number, cause: Toggle['cause']) => {
    let t = traces.get(prefix);
    if (!t) traces.set(prefix, (t = { fault: new Set(), noise: new Set() }));
    t[cause].add(`${node}:${peer}`);
  };

  /** Brings the routes of `which` nodes (for `prefixes`, or all) in line with the world; counts and traces every change. */
  const refresh = (at: number, which: readonly number[], cause: Toggle['cause'] | null, prefixes?: readonly string[]) => {
    const list = prefixes ?? topology.prefixes.map((p) => p.prefix);
    for (const n of which) {
      const node = nodes[n];
      for (const s of node.sessions) {
        const receiving = !node.birdDown && s.up && s.exporting;
        for (const prefix of list) {
          const key = routeKey(prefix, s.name);
          const path = receiving ? routing.path(s.peer, announcing.get(prefix)!, down) : null;
          const salt = salts.get(`${n} ${key}`) ?? 0;
          const was = node.routes.get(key);
          if (!path && !was) continue;
          if (path && was && was.salt === salt && was.path.join() === path.join()) continue;
          if (path) node.routes.set(key, { path, salt, view: view(prefix, s.name, path, salt, at) });
          else node.routes.delete(key);
          if (node.birdDown) continue; // nobody reads BIRD meanwhile, and its next look is a new baseline
          // A withdrawal is often preceded by path hunting: a longer path or two before the route goes.
          if (s.up) s.counter += 1 + (!path && cause !== null ? rng.int(0, 2) : 0);
          if (cause !== null) trace(prefix, n, s.peer, cause);
        }
      }
    }
  };

  const all = nodes.map((_, i) => i);
  refresh(scenario.start - 1, all, null);
  for (const node of nodes) for (const s of node.sessions) s.counter = node.routes.size; // imported since the session came up (about)

  const apply = (t: Toggle) => {
    switch (t.kind) {
      case 'session': {
        const s = nodes[t.node].sessions.find((x) => x.peer === t.peer)!;
        s.up = t.up;
        s.state = t.up ? 'established' : rng.pick(DOWN_STATES);
        s.since = t.at;
        s.counter = 0;
        return refresh(t.at, [t.node], t.cause);
      }
      case 'export': {
        nodes[t.node].sessions.find((x) => x.peer === t.peer)!.exporting = t.up;
        return refresh(t.at, [t.node], t.cause);
      }
      case 'edge':
        if (t.up) down.delete(edgeKey(t.a, t.b));
        else down.add(edgeKey(t.a, t.b));
        return refresh(t.at, all, t.cause);
      case 'announce': {
        const now = announcing.get(t.prefix)!.filter((o) => o !== t.origin);
        announcing.set(t.prefix, t.up ? [...now, t.origin] : now);
        return refresh(t.at, all, t.cause, [t.prefix]);
      }
      case 'attributes': {
        const s = nodes[t.node].sessions.find((x) => x.peer === t.peer)!;
        const key = `${t.node} ${routeKey(t.prefix, s.name)}`;
        salts.set(key, (salts.get(key) ?? 0) + 1);
        return refresh(t.at, [t.node], t.cause, [t.prefix]);
      }
      case 'bird': {
        const node = nodes[t.node];
        node.birdDown = !t.up;
        if (t.up) {
          // BIRD came back: every session that can come up is established anew.
          for (const s of node.sessions) {
            if (!s.up) continue;
            s.since = t.at;
            s.counter = 0;
          }
          refresh(t.at, [t.node], null);
        } else refresh(t.at, [t.node], null);
        return;
      }
      default: {
        const never: never = t;
        throw new Error(`unknown toggle ${JSON.stringify(never)}`);
      }
    }
  };

  const feed = scenario.feed;
  const silent = (n: number, at: number) => feed?.mode === 'silent' && feed.node === n && at >= feed.from;
  type Step = { at: number; order: number; run: () => void };
  const steps: Step[] = scenario.toggles.map((t) => ({ at: t.at, order: 0, run: () => apply(t) }));
  const posts: LabPost[] = [];
  nodes.forEach((node, n) => {
    for (let at = scenario.start + scenario.reportOffsets[n]; at < scenario.end; at += REPORT_INTERVAL_MS) {
      steps.push({
        at,
        order: 1,
        run: () => !silent(n, at) && posts.push({ at, node: n, kind: 'prefix-flaps', body: look(node, at, n === scenario.oldAgent) }),
      });
    }
    for (let at = scenario.start + scenario.snapshotOffsets[n]; at < scenario.end; at += SNAPSHOT_INTERVAL_MS) {
      steps.push({ at, order: 2, run: () => !silent(n, at) && posts.push({ at, node: n, kind: 'runtime-snapshot', body: snapshot(node, nodes, at) }) });
    }
  });
  steps
    .map((s, i) => ({ s, i }))
    .sort((x, y) => x.s.at - y.s.at || x.s.order - y.s.order || x.i - y.i)
    .forEach(({ s }) => s.run());

  // A prefix the noise changed too has no single truth: it is neither faulted nor noise for the scoring.
  const faulted = [...traces].filter(([, t]) => t.fault.size > 0 && t.noise.size === 0).map(([prefix]) => prefix);
  const mixed = [...traces].filter(([, t]) => t.fault.size > 0 && t.noise.size > 0).map(([prefix]) => prefix);
  return { posts, faulted: faulted.sort(), mixed: mixed.sort(), traces };
}

function view(prefix: string, protocol: string, path: number[], salt: number, at: number): RouteView {
  return {
    prefix,
    protocol,
    peer_asn: path[0],
    origin_asn: path[path.length - 1],
    as_path: path,
    attributes: hash53(`BGP.as_path: ${path.join(' ')}\nBGP.community: (${OUR_ASN % 65536},${salt})`),
    stamp: hash53(iso(at)),
    timed: true,
  };
}

/** One round of the agent's flap loop: look at BIRD (or find it unreadable) and take the report. */
function look(node: NodeSim, at: number, oldAgent: boolean): PrefixFlaps {
  if (node.birdDown) node.collector.lost();
  else {
    node.collector.observeParsed(
      {
        protocols: node.sessions.map((s) => ({
          name: s.name,
          state: s.up ? 'established' : s.state,
          since: iso(s.since),
          import_changes: s.up ? s.counter : null,
        })),
        views: new Map([...node.routes].map(([key, r]) => [key, r.view])),
      },
      at,
    );
  }
  const report = node.collector.report(node.id, at);
  return oldAgent ? olderFormat(report) : report;
}

/** The report of an agent from before flap localisation: no as_path, announcements, withdrawals or total_changes. */
function olderFormat(report: PrefixFlaps): PrefixFlaps {
  const { total_changes: _, ...rest } = report;
  return {
    ...rest,
    entries: report.entries.map(({ prefix, peer_asn, origin_asn, score, flaps, last_flap_at }) => ({
      prefix,
      peer_asn,
      origin_asn,
      score,
      flaps,
      last_flap_at,
    })),
  };
}

function snapshot(node: NodeSim, nodes: readonly NodeSim[], at: number): RuntimeSnapshot {
  const imported = (name: string) => [...node.routes.keys()].filter((k) => k.endsWith(`\t${name}`)).length;
  return {
    node_id: node.id,
    generation: 1,
    captured_at: iso(at),
    containers: [
      { name: 'bird', state: 'running', image: 'bird:2.15' },
      { name: 'agent', state: 'running', image: null },
    ],
    interfaces: [{ name: 'eth0', up: true, mtu: 1500, rx_bytes: 1_000_000 + Math.floor(at / 1000), tx_bytes: 2_000_000 + Math.floor(at / 1000) }],
    wireguard_interfaces: [],
    // BIRD unreadable: the snapshot has no BGP protocols (the agent leaves out what it cannot read).
    bgp_protocols: node.birdDown
      ? []
      : [
          ...node.sessions.map((s) => ({
            name: s.name,
            state: s.up ? ('established' as const) : s.state,
            since: iso(s.since),
            remote_asn: s.peer,
            routes_imported: s.up ? imported(s.name) : null,
            routes_exported: s.up ? 40 : null,
            info: s.up ? 'Established' : 'Socket: Connection refused',
          })),
          ...nodes
            .filter((other) => other !== node)
            .map((other) => ({
              name: `ibgp_${other.id}_v4`,
              state: 'established' as const,
              since: iso(Date.parse('2026-10-01T00:00:00Z')),
              remote_asn: OUR_ASN,
              routes_imported: 10,
              routes_exported: 10,
              info: 'Established',
            })),
        ],
    self_metrics: { cpu: 1.5, rss: 60_000_000, total_failures: 0, log_warning_count: 0, log_error_count: 0, last_error_at: null, last_error_message: null },
  };
}
