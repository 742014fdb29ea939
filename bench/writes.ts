// Write concurrency and fleet scale (issue 16).
//
// `concurrent-writes`: 100 writes to one node, 100 DNS record writes to one
// group of 10 members and 100 creates of different nodes, each batch done
// sequentially (the in-run baseline) and then all at once over real HTTP; every
// answer must be a success. `ratio` = concurrent batch time / sequential batch
// time (target: at most 2).
//
// `fleet-scale`: a fleet of 1,000 nodes with 10,000 BGP sessions (each node: an
// internal mesh to its 4 ring neighbours and 6 external peerings, each peering
// with a WireGuard interface and one session), seeded through the write commands
// in parallel batches, every node published. Measures a single-node PATCH
// against the same PATCH on a 10-node fleet of the same shape (`ratio`, target
// at most 1.5), a DNS record write to a group of 100 members, and the fleet-wide
// writes on all 1,000 nodes: prefix block (target under 5 s; every document
// published and validated against the desired-state schema), prefix unblock,
// peer AS disable and enable, each against the same write on the 10-node fleet.
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
  await inBatches(members.length, 6, async (i) =>
    expectStatus(h.client.put(`/admin/nodes/${members[i]}/dns-group`, { dns_group_id: group.body.id }), 200, 'dns-group assignment'),
  );
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

async function dnsWrite(h: Harness, records: string, count: number): Promise<ScaleFigures> {
  const latencies = await sequentialLatencies(count, (i) =>
    expectStatus(h.client.post(records, { name: `r${i}`, type: 'A', content: `172.20.2.${i + 1}` }), 201, 'record'),
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
async function fleetWides(h: Harness): Promise<FleetWides> {
  const one = async (path: string, body: object) => {
    const t0 = now();
    const res = await h.client.post(path, body);
    const ms = now() - t0;
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${res.text.slice(0, 300)}`);
    return { ms, changed: Object.keys(res.body.changed).length, body: res.body };
  };
  const current = async () =>
    (
      await h.sys.pool.query<{ node_id: string; generation: number; state: Record<string, unknown> }>(
        `SELECT g.node_id, g.generation, g.state FROM generations g JOIN nodes n ON n.node_id = g.node_id AND n.current_generation = g.generation`,
      )
    ).rows;
  const before = new Map((await current()).map((d) => [d.node_id, d.generation]));
  const { body, ...block } = await one('/admin/fleet/mitigations/prefix-block', { prefix: BLOCKED });
  const republished = (await current()).filter((d) => d.generation === (before.get(d.node_id) ?? 0) + 1);
  const valid = republished.filter((d) => validateDesiredState(d.state).ok && JSON.stringify(d.state).includes(BLOCKED));
  const plain = async (path: string, input: object): Promise<FleetWide> => {
    const { ms, changed } = await one(path, input);
    return { ms, changed };
  };
  return {
    block: { ...block, named: body.nodes.length, deferred: body.deferred.length, published: republished.length, validWithBlock: valid.length },
    unblock: await plain('/admin/fleet/mitigations/prefix-unblock', { prefix: BLOCKED }),
    disable: await plain('/admin/fleet/mitigations/peer-disable', { asn: PEER_AS }),
    enable: await plain('/admin/fleet/mitigations/peer-enable', { asn: PEER_AS }),
  };
}

export const fleetScaleBench: Benchmark = {
  name: 'fleet-scale',
  description:
    '1,000 nodes / 10,000 BGP sessions: node write vs a 10-node fleet, DNS write to a group of 100, fleet-wide prefix block/unblock and peer AS disable/enable',
  async run() {
    const size = envInt('BENCH_FLEET_NODES', 1000);
    const writes = envInt('BENCH_FLEET_WRITES', 30);
    const small = await start();
    const results: Record<string, unknown> = {};
    try {
      await seedFleet(small.sys, 10);
      const records10 = await dnsGroup(
        small,
        Array.from({ length: 10 }, (_, i) => nodeId(i)),
      );
      results.small = { node: await nodeWrite(small, nodeId(5), writes), dns: await dnsWrite(small, records10, 10) };
      results.smallFleet = await fleetWides(small);
    } finally {
      await small.close();
    }
    const big = await start();
    try {
      progress(`fleet-scale: seeding ${size} nodes`);
      const t0 = now();
      await seedFleet(big.sys, size);
      const seedSeconds = (now() - t0) / 1000;
      const sessions = Number((await big.sys.pool.query(`SELECT count(*) AS n FROM bgp_sessions`)).rows[0].n);
      const published = Number((await big.sys.pool.query(`SELECT count(*) AS n FROM nodes WHERE current_generation > 0`)).rows[0].n);
      progress(`fleet-scale: seeded ${size} nodes, ${sessions} sessions in ${round(seedSeconds)} s`);
      const node = await nodeWrite(big, nodeId(Math.floor(size / 2)), writes);
      const small10 = results.small as { node: ScaleFigures; dns: ScaleFigures };
      report({
        bench: 'fleet-scale',
        case: 'single-node write (labels PATCH, re-materialised)',
        nodes: size,
        bgp_sessions: sessions,
        published_nodes: published,
        seed_s: round(seedSeconds),
        ...node,
        baseline_nodes: 10,
        baseline_median_ms: small10.node.median_ms,
        baseline_p95_ms: small10.node.p95_ms,
        ratio: round(node.median_ms / small10.node.median_ms),
      });

      progress('fleet-scale: DNS group of 100 members');
      const records100 = await dnsGroup(
        big,
        Array.from({ length: 100 }, (_, i) => nodeId(i)),
      );
      const dns = await dnsWrite(big, records100, 10);
      report({
        bench: 'fleet-scale',
        case: 'DNS record write, group of 100 members',
        nodes: size,
        ...dns,
        baseline: 'group of 10 on the 10-node fleet',
        baseline_median_ms: small10.dns.median_ms,
        ratio: round(dns.median_ms / small10.dns.median_ms),
      });

      progress('fleet-scale: fleet-wide writes (prefix block, unblock, peer disable, enable)');
      const wide = await fleetWides(big);
      const smallFleet = results.smallFleet as FleetWides;
      for (const [key, what] of FLEET_WIDE_CASES) {
        const ms = wide[key].ms;
        report({
          bench: 'fleet-scale',
          case: `fleet-wide ${what}`,
          nodes: size,
          ms: round(ms),
          target_ms: 5000,
          nodes_changed: wide[key].changed,
          baseline_nodes: 10,
          baseline_ms: round(smallFleet[key].ms),
          // Nodes per second against the 10-node fleet's (1: each node costs what it costs there).
          ratio: round(wide[key].changed / ms / (smallFleet[key].changed / smallFleet[key].ms)),
          ...(key === 'block'
            ? {
                nodes_named: wide.block.named,
                deferred: wide.block.deferred,
                documents_published: wide.block.published,
                documents_valid_with_block: wide.block.validWithBlock,
              }
            : {}),
        });
      }
    } finally {
      await big.close();
    }
  },
};
