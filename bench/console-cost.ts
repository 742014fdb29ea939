// The console's read cost over a month of telemetry (issue 17, deliverable 7).
//
// A fleet of BENCH_COST_NODES (50) nodes, each with 6 external and 4 internal
// WireGuard peerings (bench/fleet-seed.ts), gets BENCH_COST_DAYS (30) days of
// telemetry at the agents' real intervals written in bulk (bench/console-seed.ts,
// the rows the report handlers write), then one round of real reports per node
// over the agent HTTP endpoints with agent tokens (WireGuard traffic twice,
// runtime snapshot, reconciliation report, routing table of 1,500 routes), so
// the latest state is what agents produce and the series continue from the
// seeded counters. Then, over real HTTP on keep-alive connections:
//
// - uncached: BENCH_COST_ROUNDS (30) sequential GETs of each endpoint, the
//   server's clock moved 6 s before each (past the dashboard's 3 s and the
//   metrics matrix's 5 s cache, which run on the service clock), so every answer
//   is built: p50/p99 latency, and the rows and buffers PostgreSQL read per
//   request (pg_stat_user_tables/pg_stat_user_indexes/pg_statio deltas of this
//   database, by table);
// - warm: BENCH_COST_WARM_REQUESTS (2,000) GETs over 8 connections with the clock
//   still (every answer a cache hit), in alternating rounds against a bare
//   Express handler answering `res.json()` with the same document.
import express from 'express';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { newAgentToken } from '../commands/agent-tokens.js';
import { handleCommand } from '../commands/handle.js';
import { agentTokenDecider, agentTokenStream } from '../domain/agent/agent-token.js';
import type { RoutingTable } from '../domain/telemetry/reports.js';
import { createControlApp } from '../http/control/app.js';
import { interfacePeerings } from '../projections/fleet/queries.js';
import { createTestSystem, startApp, type TestSystem } from '../spec/support/system.js';
import { completeFleetRoutingHistory, OTHER_INTERFACES, seededCounters, seedTelemetryHistory, type SeedNode } from './console-seed.js';
import { seedFleet } from './fleet-seed.js';
import { combined, envInt, hammer, now, percentile, progress, ratio, report, round, type Benchmark, type Timing } from './support.js';

const TOKEN = 'bench-admin-token-0123456789abcdef';
/** Past both console caches (3 s dashboard, 5 s metrics), on the service clock. */
const CACHE_STEP_MS = 6000;
const ROUTES = 1500;
const EXTERNAL_ASNS = 120;
const externalAsn = (i: number, k: number) => 4242421000 + (((i * 6 + k) * 37) % EXTERNAL_ASNS);

// ---------------------------------------------------------------- the latest reports, as agents send them

/** A node's routing table: 1,000 IPv4 and 500 IPv6 routes learnt over its peerings, AS paths of 1 to 5 hops. */
function routingTable(nodeId: string, i: number, peers: readonly number[], at: string): RoutingTable {
  const routes = Array.from({ length: ROUTES }, (_, r) => {
    const v6 = r % 3 === 2;
    const local = r < 4;
    const origin = 4242420000 + ((r * 13 + i) % 900);
    const hops = local ? [] : [peers[r % peers.length], ...Array.from({ length: r % 4 }, (_, h) => 4242420000 + ((r * 7 + h * 31) % 900)), origin];
    const prefix = v6 ? `fd${(r % 250).toString(16).padStart(2, '0')}:${(r * 13).toString(16)}::/48` : `172.2${r % 4}.${(r >> 2) & 255}.${(r * 16) & 255}/28`;
    const rpki = r % 20 === 0 ? ('invalid' as const) : r % 7 === 0 ? ('not_found' as const) : ('valid' as const);
    return { prefix, protocol: local ? 'static_local' : `ext${r % peers.length}`, origin_asn: local ? null : origin, as_path: hops, rpki, local };
  });
  return { node_id: nodeId, captured_at: at, rpki_observed: true, routes };
}

interface FleetNode extends SeedNode {
  index: number;
  token: string;
  peerAsns: number[];
}

/** One round of real reports per node at the server's now, counters continuing the seeded ones. */
async function postLatestReports(base: string, sys: TestSystem, nodes: readonly FleetNode[]): Promise<void> {
  const counters = await seededCounters(sys.pool);
  const t = sys.clock.now().getTime();
  const post = async (node: FleetNode, path: string, body: unknown) => {
    const res = await fetch(`${base}/agent/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${node.token}` },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`POST /agent/${path} of ${node.node_id} answered ${res.status}: ${await res.text()}`);
  };
  for (const node of nodes) {
    // The seeded counters are those of the snapshot a minute ago; 100 kB/s per interface since.
    const reading = (iface: string, seconds: number) => {
      const c = counters.get(node.node_id)?.get(iface) ?? { rx: 1e9, tx: 1e9 };
      return { rx_bytes: c.rx + 100_000 * seconds, tx_bytes: c.tx + 70_000 * seconds };
    };
    const iso = (ms: number) => new Date(ms).toISOString();
    for (const seconds of [45, 60]) {
      await post(node, 'wireguard-traffic', {
        node_id: node.node_id,
        captured_at: iso(t - (60 - seconds) * 1000),
        peers: node.wireguard.map((w) => ({ interface: w, ...reading(w, seconds) })),
      });
    }
    await post(node, 'runtime-snapshot', {
      node_id: node.node_id,
      generation: 1,
      captured_at: iso(t),
      containers: ['bird', 'wireguard', 'agent'].map((name) => ({ name, state: 'running', image: `${name}:1.0` })),
      interfaces: [...node.wireguard, ...OTHER_INTERFACES].map((name) => ({ name, up: true, mtu: 1420, ...reading(name, 60) })),
      wireguard_interfaces: node.wireguard.map((name, p) => ({
        name,
        public_key: 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=',
        listen_port: 21000 + p,
        peers: [],
      })),
      bgp_protocols: node.wireguard.map((name, p) => ({
        name,
        state: 'established',
        since: iso(t - 86_400_000),
        remote_asn: node.peerAsns[p] ?? 4242420001,
        routes_imported: 150,
        routes_exported: 10,
      })),
      self_metrics: {
        cpu: 2.5,
        rss: 60_000_000,
        total_failures: 0,
        log_warning_count: 1,
        log_error_count: 0,
        last_error_at: null,
        last_error_message: null,
        last_routing_collect_seconds: 0.4,
        last_reresolve_seconds: 0.1,
      },
    });
    await post(node, 'reconciliation-report', { node_id: node.node_id, generation: 1, captured_at: iso(t), status: 'in_sync', drift_items: [] });
    // The table before (a few prefixes fewer: churn to compare with), then the current one.
    await post(node, 'routing-table', { ...node.routes, captured_at: iso(t - 60_000), routes: node.routes.routes.slice(5) });
    await post(node, 'routing-table', { ...node.routes, captured_at: iso(t) });
  }
  await sys.context.background.drain();
}

// ---------------------------------------------------------------- what PostgreSQL read

interface TableReads {
  rows: number;
  buffers: number;
}

/** Rows read (sequential scan tuples plus index entries returned) and buffers touched, per table of this database. */
async function tableReads(sys: TestSystem): Promise<Map<string, TableReads>> {
  await sys.pool.query(`SELECT pg_stat_clear_snapshot()`);
  const { rows } = await sys.pool.query(
    `SELECT t.relname, coalesce(t.seq_tup_read, 0) + coalesce((SELECT sum(i.idx_tup_read) FROM pg_stat_user_indexes i WHERE i.relid = t.relid), 0) AS rows,
       coalesce(s.heap_blks_hit, 0) + coalesce(s.heap_blks_read, 0) + coalesce(s.idx_blks_hit, 0) + coalesce(s.idx_blks_read, 0) + coalesce(s.toast_blks_hit, 0) + coalesce(s.toast_blks_read, 0) AS buffers
     FROM pg_stat_user_tables t JOIN pg_statio_user_tables s USING (relid)`,
  );
  return new Map(rows.map((r: { relname: string; rows: string; buffers: string }) => [r.relname, { rows: Number(r.rows), buffers: Number(r.buffers) }]));
}

/** Backends publish their table statistics when idle, but at most once a second, and a backend that published less than a second ago retries only 10 s later (PostgreSQL 15, PGSTAT_IDLE_INTERVAL): wait that out before reading them. */
const statsSettle = () => new Promise((resolve) => setTimeout(resolve, 11_000));

function readsPerRequest(before: Map<string, TableReads>, after: Map<string, TableReads>, requests: number) {
  const per = [...after].map(([table, a]) => ({
    table,
    rows: (a.rows - (before.get(table)?.rows ?? 0)) / requests,
    buffers: (a.buffers - (before.get(table)?.buffers ?? 0)) / requests,
  }));
  const read = per.filter((p) => p.rows > 0 || p.buffers > 0).sort((a, b) => b.rows - a.rows || b.buffers - a.buffers);
  return {
    rows_read_per_request: round(read.reduce((s, p) => s + p.rows, 0)),
    buffers_per_request: round(read.reduce((s, p) => s + p.buffers, 0)),
    by_table: Object.fromEntries(read.slice(0, 8).map((p) => [p.table, { rows: round(p.rows), buffers: round(p.buffers) }])),
  };
}

// ---------------------------------------------------------------- timing

async function timedGet(agent: Agent, url: string): Promise<{ ms: number; body: string; status: number }> {
  const t0 = now();
  return new Promise((resolve, reject) => {
    request(url, { agent, headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ ms: now() - t0, body: Buffer.concat(chunks).toString(), status: res.statusCode ?? 0 }));
    })
      .on('error', reject)
      .end();
  });
}

interface Case {
  name: string;
  /** The URL of the i-th uncached request (varied where the endpoint has no cache, to spread over nodes). */
  url: (i: number) => string;
}

async function measureCase(sys: TestSystem, control: string, c: Case, rounds: number, warmRequests: number): Promise<Record<string, unknown>> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const probe = await timedGet(agent, `${control}${c.url(0)}`);
  if (probe.status === 404 && JSON.parse(probe.body).detail === 'not found')
    return { bench: 'console-cost', case: c.name, skipped: 'endpoint not served by this tree' };
  if (probe.status !== 200) throw new Error(`${c.url(0)} answered ${probe.status}: ${probe.body.slice(0, 300)}`);
  // Uncached: each request after the clock moved past the caches.
  for (let i = 0; i < 3; i++) {
    sys.clock.advance(CACHE_STEP_MS);
    await timedGet(agent, `${control}${c.url(i)}`);
  }
  await statsSettle();
  const load = loadavg()[0];
  const before = await tableReads(sys);
  const latencies: number[] = [];
  let bytes = 0;
  for (let i = 0; i < rounds; i++) {
    sys.clock.advance(CACHE_STEP_MS);
    const r = await timedGet(agent, `${control}${c.url(i)}`);
    if (r.status !== 200) throw new Error(`${c.url(i)} answered ${r.status}: ${r.body.slice(0, 300)}`);
    latencies.push(r.ms);
    bytes = r.body.length;
  }
  await statsSettle();
  const reads = readsPerRequest(before, await tableReads(sys), rounds);
  latencies.sort((a, b) => a - b);
  agent.destroy();

  // Warm: the same URL with the clock still (cache hits where the endpoint caches) against a bare handler of the same JSON.
  const url = `${control}${c.url(0)}`;
  const document = JSON.parse((await timedGet(new Agent(), url)).body);
  const app = express();
  app.get('/same', (_req, res) => {
    res.json(document);
  });
  const bare = await startApp(app);
  const subjects: Timing[] = [];
  const baselines: Timing[] = [];
  try {
    const headers = { authorization: `Bearer ${TOKEN}` };
    await hammer(url, 200, 8, headers);
    await hammer(`${bare.url}/same`, 200, 8);
    for (let r = 0; r < 4; r++) {
      const n = Math.ceil(warmRequests / 4);
      const s = () => hammer(url, n, 8, headers).then((t) => subjects.push(t));
      const b = () => hammer(`${bare.url}/same`, n, 8).then((t) => baselines.push(t));
      if (r % 2 === 0) await s().then(b);
      else await b().then(s);
    }
  } finally {
    await bare.close();
  }
  const subject = combined(subjects);
  const baseline = combined(baselines);
  return {
    bench: 'console-cost',
    case: c.name,
    body_bytes: bytes,
    uncached: {
      requests: rounds,
      p50_ms: round(percentile(latencies, 50)),
      p99_ms: round(percentile(latencies, 99)),
      max_ms: round(latencies[latencies.length - 1]),
      ...reads,
    },
    warm: { requests: warmRequests, per_second: round(subject.perSecond), p50_ms: round(subject.p50), p99_ms: round(subject.p99) },
    baseline: { per_second: round(baseline.perSecond), p50_ms: round(baseline.p50), p99_ms: round(baseline.p99) },
    ratio: ratio(subject.perSecond, baseline.perSecond),
    round_ratios: subjects.map((t, i) => ratio(t.perSecond, baselines[i].perSecond)),
    load_average: round(load, 2),
  };
}

// ---------------------------------------------------------------- the benchmark

export const consoleCostBench: Benchmark = {
  name: 'console-cost',
  description: 'console reads over 30 days of telemetry of 50 nodes: dashboard, metrics matrix, prefix search, uncached and warm vs bare Express',
  async run() {
    const count = envInt('BENCH_COST_NODES', 50);
    const days = envInt('BENCH_COST_DAYS', 30);
    const rounds = envInt('BENCH_COST_ROUNDS', 30);
    const warmRequests = envInt('BENCH_COST_WARM_REQUESTS', 2000);
    const sys = await createTestSystem({ env: { ADMIN_TOKEN: TOKEN } });
    const control = await startApp(createControlApp(sys.context));
    const base = `${control.url}/control/v1`;
    try {
      progress(`console-cost: seeding ${count} nodes with their peerings`);
      let t0 = now();
      await seedFleet(sys, count, { externalAsn });
      const fleetSeconds = (now() - t0) / 1000;
      const peerings = await interfacePeerings(sys.pool);
      const end = sys.clock.now();
      const nodes: FleetNode[] = await Promise.all(
        [...peerings.keys()].sort().map(async (nodeId, index) => {
          const interfaces = [...peerings.get(nodeId)!.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
          const { secret, parts } = newAgentToken({ now: new Date() });
          await handleCommand(
            sys.store,
            agentTokenStream(parts.token_id),
            agentTokenDecider,
            { type: 'IssueAgentToken', node_id: nodeId, ...parts },
            { actor: 'bench' },
          );
          const peerAsns = interfaces.map(([, p]) => p?.remote_asn ?? 4242420001);
          const routes = routingTable(nodeId, index, peerAsns, end.toISOString());
          return { node_id: nodeId, index, token: `${parts.token_id}.${secret}`, wireguard: interfaces.map(([name]) => name), peerAsns, routes };
        }),
      );

      progress(`console-cost: writing ${days} days of telemetry history`);
      const client = await sys.pool.connect();
      let history;
      try {
        history = await seedTelemetryHistory(client, nodes, { start: new Date(end.getTime() - days * 86_400_000), end });
      } finally {
        client.release();
      }
      progress(`console-cost: history written in ${history.seconds.toFixed(1)} s; posting the latest reports over HTTP`);
      t0 = now();
      await postLatestReports(base, sys, nodes);
      await completeFleetRoutingHistory(sys.pool);
      const postSeconds = (now() - t0) / 1000;
      const { rows: sizeRows } = await sys.pool.query(`SELECT pg_database_size(current_database()) AS bytes`);
      report({
        bench: 'console-cost',
        case: 'seed',
        nodes: count,
        days,
        wireguard_interfaces: nodes.reduce((s, n) => s + n.wireguard.length, 0),
        fleet_s: round(fleetSeconds),
        history_s: round(history.seconds),
        latest_reports_s: round(postSeconds),
        rows: history.rows,
        history_table_s: history.table_seconds,
        database_mb: round(Number(sizeRows[0].bytes) / 1048576, 0),
      });

      const node = (i: number) => nodes[i % nodes.length];
      const cases: Case[] = [
        { name: 'GET /ui/dashboard?range=30d&as_traffic=1', url: () => '/control/v1/ui/dashboard?range=30d&as_traffic=1' },
        { name: 'GET /ui/nodes/metrics?range=7d', url: () => '/control/v1/ui/nodes/metrics?range=7d' },
        { name: 'GET /ui/fleet/traffic?range=30d', url: () => '/control/v1/ui/fleet/traffic?range=30d' },
        {
          name: 'GET /admin/nodes/{id}/routing/prefixes?q=&path_asn=',
          url: (i) => `/control/v1/admin/nodes/${node(i).node_id}/routing/prefixes?q=172.2${i % 4}&path_asn=${node(i).peerAsns[i % 6]}`,
        },
      ];
      for (const c of cases) {
        progress(`console-cost: ${c.name}`);
        report(await measureCase(sys, control.url, c, rounds, warmRequests));
      }
    } finally {
      await control.close();
      await sys.close();
    }
  },
};
