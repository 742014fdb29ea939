// Write concurrency and fleet scale (issue 16).
//
// `concurrent-writes`: 100 writes to one node, 100 DNS record writes to one
// group of 10 members and 100 creates of different nodes, each batch done
// sequentially (the in-run baseline) and then all at once over real HTTP; every
// answer must be a success. `ratio` = concurrent batch time / sequential batch
// time (target: at most 2).
//
// `fleet-scale`: fleets of BENCH_FLEET_NODES nodes (default 1,000; a list such as
// 10,100,1000,10000 walks the sizes) with 10 BGP sessions a node (an internal
// mesh to its 4 ring neighbours and 6 external peerings, each peering with a
// WireGuard interface and one session), seeded in bulk through the write path's
// parts (`bench/fleet-seed.ts`), every node published, a few nodes read back
// through the API. Measures a single-node PATCH against the same PATCH on a
// 10-node fleet of the same shape (`ratio`, target at most 1.5), a DNS record
// write to a group of up to 1,000 members (target p95 under 2 s), and the
// fleet-wide writes on every node: prefix block (target under 10 s, per-node
// cost at most 1.5x the 10-node fleet's; every document published and validated
// against the desired-state schema), prefix unblock, peer AS disable and enable.
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import pg from 'pg';
import { createControlApp } from '../http/control/app.js';
import { inBatches, nodeFields, nodeId, seedFleet, wg } from './fleet-seed.js';
import { validateDesiredState } from '../domain/desired-state/schema.js';
import { api } from '../spec/support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../spec/support/system.js';
import { envInt, now, percentile, progress, report, round, type Benchmark } from './support.js';

const TOKEN = 'bench-admin-token-0123456789abcdef';
type Client = ReturnType<typeof api>;

interface Harness {
  sys: TestSystem;
  client: Client;
  close(): Promise<void>;
}

async function start(): Promise<Harness> {
  const sys = await createTestSystem({ env: { ADMIN_TOKEN: TOKEN } });
  const control = await startApp(createControlApp(sys.context));
  return {
    sys,
    client: api(`${control.url}/control/v1`, { token: TOKEN }),
    async close() {
      await control.close();
      await sys.close();
    },
  };
}

async function expectStatus(res: Promise<{ status: number; text: string }>, status: number, what: string): Promise<void> {
  const r = await res;
  if (r.status !== status) throw new Error(`${what} answered ${r.status}: ${r.text.slice(0, 300)}`);
}

/** Latencies of `count` sequential calls, sorted ascending. */
async function sequentialLatencies(count: number, one: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = now();
    await one(i);
    out.push(now() - t0);
  }
  return out.sort((a, b) => a - b);
}

/** A DNS group with the given members, one zone; answers the records URL. */
async function dnsGroup(h: Harness, members: readonly string[]): Promise<string> {
  const group = await h.client.post('/admin/dns-groups', { name: `g${members.length}`, bind_addresses: ['172.20.0.53'] });
  if (group.status !== 201) throw new Error(`dns group answered ${group.status}: ${group.text}`);
  await inBatches(members.length, 6, async (i) => {
    // Setup, untimed: a 503 (the shared PostgreSQL out of connections) is tried again.
    for (let attempt = 1; ; attempt++) {
      const res = await h.client.put(`/admin/nodes/${members[i]}/dns-group`, { dns_group_id: group.body.id });
      if (res.status === 503 && attempt < 5) {
        await new Promise((done) => setTimeout(done, 1000 * attempt));
        continue;
      }
      return expectStatus(Promise.resolve(res), 200, 'dns-group assignment');
    }
  });
  const zone = await h.client.post(`/admin/dns-groups/${group.body.id}/zones`, { zone: `g${members.length}.dn42` });
  if (zone.status !== 201) throw new Error(`zone answered ${zone.status}: ${zone.text}`);
  return `/admin/dns-groups/${group.body.id}/zones/${zone.body.zone.id}/records`;
}

interface BatchFigures {
  sequential_ms: number;
  concurrent_ms: number;
  /** concurrent / sequential: at most 2 is the target. */
  ratio: number;
  failures: number;
  statuses: Record<string, number>;
}

/** The same kind of write `count` times in sequence, then `count` times at once; every answer must be `ok`. */
async function batch(count: number, write: (i: number, phase: 'seq' | 'con') => Promise<{ status: number }>, ok: number): Promise<BatchFigures> {
  const statuses: Record<string, number> = {};
  const count1 = (s: number) => (statuses[s] = (statuses[s] ?? 0) + 1);
  let t0 = now();
  for (let i = 0; i < count; i++) count1((await write(i, 'seq')).status);
  const sequential = now() - t0;
  t0 = now();
  (await Promise.all(Array.from({ length: count }, (_, i) => write(i, 'con')))).forEach((r) => count1(r.status));
  const concurrent = now() - t0;
  const failures = Object.entries(statuses).reduce((n, [s, c]) => (Number(s) === ok ? n : n + c), 0);
  return { sequential_ms: round(sequential), concurrent_ms: round(concurrent), ratio: round(concurrent / sequential), failures, statuses };
}

export const concurrentWritesBench: Benchmark = {
  name: 'concurrent-writes',
  description:
    '100 writes to one node, 100 DNS record writes to a group of 10, 100 creates of different nodes: concurrent batch time vs the same writes in sequence',
  async run() {
    const count = envInt('BENCH_CONCURRENT_WRITES', 100);
    const h = await start();
    try {
      await expectStatus(h.client.post('/admin/nodes', { node_id: 'busy', ...nodeFields(0) }), 201, 'create');
      await expectStatus(h.client.post('/admin/nodes/busy/interfaces', { spec: wg('dn42_a', 20001) }), 201, 'interface');
      progress(`concurrent-writes: ${count} PATCHes of one node`);
      const oneNode = await batch(count, (i, phase) => h.client.patch('/admin/nodes/busy', { labels: { phase, i } }), 200);
      report({ bench: 'concurrent-writes', case: 'one node (PATCH, re-materialised)', writes: count, ...oneNode });

      const members = Array.from({ length: 10 }, (_, i) => `m${i}`);
      for (const [i, m] of members.entries()) {
        await expectStatus(h.client.post('/admin/nodes', { node_id: m, ...nodeFields(i + 1) }), 201, 'create');
        await expectStatus(h.client.post(`/admin/nodes/${m}/interfaces`, { spec: wg('dn42_a', 20001) }), 201, 'interface');
      }
      const records = await dnsGroup(h, members);
      progress(`concurrent-writes: ${count} DNS record writes to a group of 10`);
      const dns = await batch(count, (i, phase) => h.client.post(records, { name: `${phase}${i}`, type: 'A', content: `172.20.1.${(i % 250) + 1}` }), 201);
      report({ bench: 'concurrent-writes', case: 'DNS records, group of 10 members', writes: count, ...dns });

      progress(`concurrent-writes: ${count} creates of different nodes`);
      const creates = await batch(count, (i, phase) => h.client.post('/admin/nodes', { node_id: `${phase}${i}`, ...nodeFields(100 + i) }), 201);
      report({ bench: 'concurrent-writes', case: 'creates of different nodes', writes: count, ...creates });
    } finally {
      await h.close();
    }
  },
};

interface ScaleFigures {
  median_ms: number;
  p95_ms: number;
}

/** PATCHes of one node's labels on a seeded fleet (re-materialises the node). */
async function nodeWrite(h: Harness, target: string, count: number): Promise<ScaleFigures> {
  await h.client.patch(`/admin/nodes/${target}`, { labels: { warm: true } });
  const latencies = await sequentialLatencies(count, (i) => expectStatus(h.client.patch(`/admin/nodes/${target}`, { labels: { i } }), 200, 'PATCH'));
  return { median_ms: round(percentile(latencies, 50)), p95_ms: round(percentile(latencies, 95)) };
}

/** Record creates in a DNS group; with `BENCH_FLEET_PROFILE`, profiled as `<profile>` (all of them) with their statements' times. */
async function dnsWrite(h: Harness, records: string, count: number, profile: string): Promise<ScaleFigures> {
  const { result: latencies } = await profiled(profile, () =>
    countingQueries(() =>
      sequentialLatencies(count, (i) => expectStatus(h.client.post(records, { name: `r${i}`, type: 'A', content: `172.20.2.${i + 1}` }), 201, 'record')),
    ),
  );
  return { median_ms: round(percentile(latencies, 50)), p95_ms: round(percentile(latencies, 95)) };
}

const BLOCKED = '172.23.99.0/24';
/** Every node has an external session with this AS (`seedFleet`). */
const PEER_AS = 4242421000;

interface FleetWide {
  ms: number;
  /** Nodes in the answer's `changed`. */
  changed: number;
  /** Statements sent to PostgreSQL during the write, by every client of the process (round trips). */
  queries: number;
}

/** Statements sent by every pg client of this process while `work` runs (the bench's own server is in process). */
async function countingQueries<T>(work: () => Promise<T>): Promise<{ result: T; queries: number }> {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  let queries = 0;
  const times = new Map<string, number>();
  proto.query = function (this: unknown, ...args: unknown[]) {
    queries++;
    const q = args[0] as string | { text?: string; name?: string };
    const text = (typeof q === 'string' ? q : (q?.name ?? q?.text ?? '?')).replace(/\s+/g, ' ').slice(0, 90);
    const t0 = now();
    const out = original.apply(this, args);
    if (out && typeof (out as Promise<unknown>).then === 'function')
      void (out as Promise<unknown>).then(
        () => times.set(text, (times.get(text) ?? 0) + now() - t0),
        () => undefined,
      );
    return out;
  };
  try {
    return { result: await work(), queries };
  } finally {
    proto.query = original;
    if (process.env.BENCH_FLEET_PROFILE) for (const [text, ms] of [...times].sort((a, b) => b[1] - a[1]).slice(0, 12)) progress(`  ${round(ms)} ms  ${text}`);
  }
}

/**
 * With `BENCH_FLEET_PROFILE` set to a directory, a CPU profile of the process
 * (the control server runs in it) over `work`, written there as `<name>.cpuprofile`.
 */
async function profiled<T>(name: string, work: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_FLEET_PROFILE;
  if (!dir) return work();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    await writeFile(`${dir}/${name}.cpuprofile`, JSON.stringify(profile));
    session.disconnect();
  }
}
interface FleetWides {
  block: FleetWide & { named: number; deferred: number; published: number; validWithBlock: number };
  unblock: FleetWide;
  disable: FleetWide;
  enable: FleetWide;
}
const FLEET_WIDE_CASES = [
  ['block', 'prefix block'],
  ['unblock', 'prefix unblock'],
  ['disable', 'peer AS disable'],
  ['enable', 'peer AS enable'],
] as const;

/**
 * The fleet-wide writes, each on every node, one after the other: prefix block
 * (then checks that every node got exactly one new generation whose document is
 * valid and carries the block), unblock, peer AS disable, peer AS enable.
 */
async function fleetWides(h: Harness, size: number): Promise<FleetWides> {
  const one = async (path: string, body: object) => {
    // The read of every document before a write can outlast the server's keep-alive: a GET first, so the POST
    // does not go out on a connection the server has just closed (undici: "fetch failed").
    for (let attempt = 1; ; attempt++) {
      try {
        await h.client.get('/admin/fleet/port-pools');
        break;
      } catch (err) {
        if (attempt >= 3) throw err;
      }
    }
    let ms = 0;
    // Timed inside the profile: starting the profiler takes longer than a write on the small fleet.
    const { result: res, queries } = await profiled(`fleet-${size}-${path.split('/').pop()}`, () =>
      countingQueries(async () => {
        const t0 = now();
        const answer = await h.client.post(path, body);
        ms = now() - t0;
        return answer;
      }),
    );
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
    return { ms, changed: Object.keys(res.body.changed).length, queries, body: res.body };
  };
  const current = async () =>
    (
      await h.sys.pool.query<{ node_id: string; generation: number; state: Record<string, unknown> }>(
        `SELECT g.node_id, g.generation, COALESCE(g.state, e.data -> 'state') AS state
         FROM generations g JOIN nodes n ON n.node_id = g.node_id AND n.current_generation = g.generation
         LEFT JOIN events e ON e.position = g.event_position`,
      )
    ).rows;
  const before = new Map((await current()).map((d) => [d.node_id, d.generation]));
  const { body, ...block } = await one('/admin/fleet/mitigations/prefix-block', { prefix: BLOCKED });
  const republished = (await current()).filter((d) => d.generation === (before.get(d.node_id) ?? 0) + 1);
  const valid = republished.filter((d) => validateDesiredState(d.state).ok && JSON.stringify(d.state).includes(BLOCKED));
  const plain = async (path: string, input: object): Promise<FleetWide> => {
    const { ms, changed, queries } = await one(path, input);
    return { ms, changed, queries };
  };
  return {
    block: { ...block, named: body.nodes.length, deferred: body.deferred.length, published: republished.length, validWithBlock: valid.length },
    unblock: await plain('/admin/fleet/mitigations/prefix-unblock', { prefix: BLOCKED }),
    disable: await plain('/admin/fleet/mitigations/peer-disable', { asn: PEER_AS }),
    enable: await plain('/admin/fleet/mitigations/peer-enable', { asn: PEER_AS }),
  };
}

/** `BENCH_FLEET_NODES`: one fleet size or a comma-separated list of them, walked in order. */
function fleetSizes(): number[] {
  const raw = process.env.BENCH_FLEET_NODES ?? '1000';
  const sizes = raw.split(',').map((v) => Number(v.trim()));
  if (sizes.some((n) => !Number.isInteger(n) || n < 10)) throw new Error(`BENCH_FLEET_NODES must list integers of at least 10, got ${raw}`);
  return sizes;
}

/** Nodes whose records and documents `verifySeed` reads back through the API. */
const sample = (size: number) => [...new Set([0, Math.floor(size / 2), size - 1])];

/**
 * Reads a few seeded nodes back through the API: the node, its 10 peerings,
 * interfaces and sessions, and its published document (valid, generation 1).
 * The bulk seed must leave what the write commands leave.
 */
async function verifySeed(h: Harness, size: number): Promise<void> {
  for (const i of sample(size)) {
    const id = nodeId(i);
    const node = await h.client.get(`/admin/nodes/${id}`);
    if (node.status !== 200 || node.body.node_id !== id || node.body.current_generation !== 1)
      throw new Error(`seed: node ${id} answered ${node.status}: ${node.text.slice(0, 300)}`);
    const internal = Math.min(4, size - 1);
    for (const [path, key] of [
      ['peerings', 'peerings'],
      ['interfaces', 'interfaces'],
      ['bgp-sessions', 'bgp_sessions'],
    ] as const) {
      const list = await h.client.get(`/admin/nodes/${id}/${path}`);
      const items = (list.body[key] ?? list.body) as unknown[];
      if (list.status !== 200 || !Array.isArray(items) || items.length !== 6 + internal)
        throw new Error(`seed: node ${id} ${path} answered ${list.status} with ${Array.isArray(items) ? items.length : 'no list'}: ${list.text.slice(0, 300)}`);
    }
    const doc = await h.client.get(`/admin/nodes/${id}/desired-state`);
    const check = validateDesiredState(doc.body.state);
    if (doc.status !== 200 || doc.body.generation !== 1 || !check.ok)
      throw new Error(`seed: node ${id} desired state answered ${doc.status}, generation ${doc.body.generation}: ${JSON.stringify(check).slice(0, 300)}`);
  }
}

interface SizeFigures {
  size: number;
  sessions: number;
  seed_s: number;
  node: ScaleFigures;
  dnsMembers: number;
  dnsSetup_s: number;
  dns: ScaleFigures;
  wide: FleetWides;
}

/** One fleet of `size` nodes: seed, verify, then the measured writes. */
async function measureFleet(size: number, dnsMembers: number, writes: number, dnsWrites: number): Promise<SizeFigures> {
  const h = await start();
  try {
    progress(`fleet-scale: seeding ${size} nodes`);
    let t0 = now();
    await seedFleet(h.sys, size);
    const seedSeconds = (now() - t0) / 1000;
    const sessions = Number((await h.sys.pool.query(`SELECT count(*) AS n FROM bgp_sessions`)).rows[0].n);
    const published = Number((await h.sys.pool.query(`SELECT count(*) AS n FROM nodes WHERE current_generation = 1`)).rows[0].n);
    if (published !== size || sessions !== size * Math.min(10, 6 + size - 1)) throw new Error(`seed: ${published} nodes published, ${sessions} sessions`);
    await verifySeed(h, size);
    progress(`fleet-scale: seeded ${size} nodes, ${sessions} sessions in ${round(seedSeconds)} s`);
    const node = await nodeWrite(h, nodeId(Math.floor(size / 2)), writes);
    const members = Math.min(dnsMembers, size);
    progress(`fleet-scale: DNS group of ${members} members`);
    t0 = now();
    const records = await dnsGroup(
      h,
      Array.from({ length: members }, (_, i) => nodeId(i)),
    );
    const dnsSetup = (now() - t0) / 1000;
    const dns = await dnsWrite(h, records, dnsWrites, `fleet-${size}-dns`);
    progress(`fleet-scale: fleet-wide writes on ${size} nodes (prefix block, unblock, peer disable, enable)`);
    const wide = await fleetWides(h, size);
    return { size, sessions, seed_s: round(seedSeconds), node, dnsMembers: members, dnsSetup_s: round(dnsSetup), dns, wide };
  } finally {
    await h.close();
  }
}

/** Per-node cost of a fleet-wide write on `size` nodes over its cost on the baseline fleet (1: the same; the target is at most 1.5). */
const perNodeCost = (wide: FleetWide, base: FleetWide) => round(wide.ms / wide.changed / (base.ms / base.changed));

export const fleetScaleBench: Benchmark = {
  name: 'fleet-scale',
  description:
    'fleets of BENCH_FLEET_NODES (default 1,000; a list walks the sizes) with 10 BGP sessions a node: node write vs a 10-node fleet, DNS write to a group of up to 1,000, fleet-wide prefix block/unblock and peer AS disable/enable',
  async run() {
    const sizes = fleetSizes();
    const writes = envInt('BENCH_FLEET_WRITES', 30);
    const dnsWrites = envInt('BENCH_FLEET_DNS_WRITES', 20);
    const dnsMembers = envInt('BENCH_FLEET_DNS_MEMBERS', 1000);
    progress('fleet-scale: the 10-node baseline fleet');
    const base = await measureFleet(10, 10, writes, 10);
    const curve = (f: SizeFigures) =>
      report({
        bench: 'fleet-scale',
        case: 'curve',
        nodes: f.size,
        bgp_sessions: f.sessions,
        seed_s: f.seed_s,
        single_node_median_ms: f.node.median_ms,
        dns_members: f.dnsMembers,
        dns_p95_ms: f.dns.p95_ms,
        ...Object.fromEntries(FLEET_WIDE_CASES.map(([key]) => [`${key}_ms`, round(f.wide[key].ms)])),
        block_ms_per_node: round(f.wide.block.ms / f.wide.block.changed, 3),
        block_queries: f.wide.block.queries,
      });
    curve(base);
    for (const size of sizes) {
      const f = await measureFleet(size, dnsMembers, writes, dnsWrites);
      curve(f);
      report({
        bench: 'fleet-scale',
        case: 'single-node write (labels PATCH, re-materialised)',
        nodes: size,
        bgp_sessions: f.sessions,
        seed_s: f.seed_s,
        ...f.node,
        baseline_nodes: 10,
        baseline_median_ms: base.node.median_ms,
        baseline_p95_ms: base.node.p95_ms,
        ratio: round(f.node.median_ms / base.node.median_ms),
        target_ratio: 1.5,
      });
      report({
        bench: 'fleet-scale',
        case: `DNS record write, group of ${f.dnsMembers} members`,
        nodes: size,
        members: f.dnsMembers,
        group_setup_s: f.dnsSetup_s,
        ...f.dns,
        target_p95_ms: f.dnsMembers >= 1000 ? 2000 : undefined,
        baseline: 'group of 10 on the 10-node fleet',
        baseline_median_ms: base.dns.median_ms,
        baseline_p95_ms: base.dns.p95_ms,
      });
      for (const [key, what] of FLEET_WIDE_CASES) {
        const w = f.wide[key];
        report({
          bench: 'fleet-scale',
          case: `fleet-wide ${what}`,
          nodes: size,
          ms: round(w.ms),
          target_ms: 10000,
          nodes_changed: w.changed,
          queries: w.queries,
          baseline_nodes: 10,
          baseline_ms: round(base.wide[key].ms),
          per_node_cost_ratio: perNodeCost(w, base.wide[key]),
          target_ratio: 1.5,
          ...(key === 'block'
            ? {
                nodes_named: f.wide.block.named,
                deferred: f.wide.block.deferred,
                documents_published: f.wide.block.published,
                documents_valid_with_block: f.wide.block.validWithBlock,
              }
            : {}),
        });
      }
      const block = f.wide.block;
      if (block.changed !== size || block.published !== size || block.validWithBlock !== size)
        throw new Error(
          `fleet-wide prefix block on ${size} nodes: ${block.changed} changed, ${block.published} published, ${block.validWithBlock} valid with the block`,
        );
    }
  },
};
