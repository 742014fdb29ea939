// (e) Agent WebSocket fan-out: N agents of one node connected to the control
// server's hub (real handshake: token resolution, presence row, hello); one
// fleet write (a rollback: append, inline projection, commit, doorbell) rings
// all of them. Measures commit-to-last-agent latency and memory per connection.
// Baseline in the same run: a bare `ws` server in the same process sending the
// same frame to the same number of clients.
//
// The clients run in a child process (this file, forked with
// BENCH_AGENT_WS_ROLE=clients): the server's memory is measured without theirs,
// and each process stays within its own descriptor limit (10,000 agents need
// 10,000 sockets on each side; `ulimit -n` must allow that plus the pool).
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { WebSocket, WebSocketServer } from 'ws';
import { rollbackGeneration } from '../commands/generations.js';
import { createControlApp } from '../http/control/app.js';
import { fleetDeps } from '../http/control/fleet/common.js';
import type { DoorbellEvent } from '../domain/doorbell.js';
import { issueAgentToken } from '../spec/support/agents.js';
import { createTestSystem, startApp } from '../spec/support/system.js';
import { collectGarbage, percentile, progress, ratio, report, round, type Benchmark, ChildPeer } from './support.js';

const TOKEN = 'bench-admin-token-0123456789abcdef';
const NODE = 'bench1';

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes of one machine. */
const stamp = (): number => performance.timeOrigin + performance.now();

type ToClients = { cmd: 'connect'; url: string; n: number; headers: Record<string, string> } | { cmd: 'arm'; n: number } | { cmd: 'disconnect' };
type FromClients = { ready: number; failed: number } | { armed: true } | { stamps: number[] } | { disconnected: true };
type Clients = ChildPeer<ToClients, FromClients>;

interface Side {
  label: string;
  url: string;
  headers: Record<string, string>;
  /** Triggers one broadcast; resolves with the instant the event was committed (subject) or handed to the sockets (baseline). */
  trigger(): Promise<number>;
  /** Server-side connections still held (memory is measured once the previous side let go of its own). */
  held(): number;
}

interface SideResult {
  last_agent_p50_ms: number;
  last_agent_p99_ms: number;
  per_agent_p50_ms: number;
  per_agent_p99_ms: number;
  connect_s: number;
  heap_per_connection_kb: number;
  rss_per_connection_kb: number;
}

async function measureSide(clients: Clients, side: Side, n: number, rounds: number, other: Side): Promise<SideResult> {
  while (side.held() + other.held() > 0) await new Promise((r) => setTimeout(r, 50));
  collectGarbage();
  const before = process.memoryUsage();
  const t0 = stamp();
  clients.send({ cmd: 'connect', url: side.url, n, headers: side.headers });
  const ready = await clients.next<{ ready: number; failed: number }>(600_000);
  const connectSeconds = (stamp() - t0) / 1000;
  if (ready.ready !== n) throw new Error(`${side.label}: only ${ready.ready} of ${n} agents connected (${ready.failed} failed)`);
  collectGarbage();
  const after = process.memoryUsage();
  const lastAgent: number[] = [];
  const perAgent: number[] = [];
  for (let r = 0; r < rounds; r++) {
    clients.send({ cmd: 'arm', n });
    await clients.next<{ armed: true }>();
    const committed = await side.trigger();
    const { stamps } = await clients.next<{ stamps: number[] }>(60_000);
    const latencies = stamps.map((s) => s - committed);
    lastAgent.push(Math.max(...latencies));
    perAgent.push(...latencies);
  }
  clients.send({ cmd: 'disconnect' });
  await clients.next<{ disconnected: true }>();
  lastAgent.sort((a, b) => a - b);
  perAgent.sort((a, b) => a - b);
  return {
    last_agent_p50_ms: round(percentile(lastAgent, 50)),
    last_agent_p99_ms: round(percentile(lastAgent, 99)),
    per_agent_p50_ms: round(percentile(perAgent, 50)),
    per_agent_p99_ms: round(percentile(perAgent, 99)),
    connect_s: round(connectSeconds),
    heap_per_connection_kb: round((after.heapUsed - before.heapUsed) / n / 1024),
    rss_per_connection_kb: round((after.rss - before.rss) / n / 1024),
  };
}

/** The baseline: a bare ws server that says hello on connect and sends one frame to every client on trigger. */
async function bareServer(): Promise<{ url: string; broadcast(frame: string): number; held(): number; close(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', (ws) => ws.send(JSON.stringify({ type: 'hello', node_id: NODE })));
  const { port } = wss.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}/`,
    broadcast(frame) {
      const at = stamp();
      for (const ws of wss.clients) ws.send(frame);
      return at;
    },
    held: () => wss.clients.size,
    close: () => new Promise((resolve) => wss.close(() => resolve())),
  };
}

export const agentWsBench: Benchmark = {
  name: 'agent-ws',
  description: 'N agent WebSockets of one node rung by one fleet write: commit-to-last-agent latency and memory per connection, vs a bare ws broadcast',
  async run() {
    const sizes = (process.env.BENCH_AGENT_WS_N ?? '1000,5000,10000').split(',').map(Number);
    const rounds = Number(process.env.BENCH_AGENT_WS_ROUNDS ?? 20);
    const sys = await createTestSystem({ env: { ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent' } });
    const control = await startApp(createControlApp(sys.context));
    const bare = await bareServer();
    const clients = new ChildPeer<ToClients, FromClients>('client process', import.meta.url, 'BENCH_AGENT_WS_ROLE', 'clients');
    try {
      const admin = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };
      const create = await fetch(`${control.url}/control/v1/admin/nodes`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ node_id: NODE, asn: 4242420001, router_id: '172.20.0.1', link_local: 'fe80::1' }),
      });
      if (create.status !== 201) throw new Error(`node create answered ${create.status}`);
      const iface = await fetch(`${control.url}/control/v1/admin/nodes/${NODE}/interfaces`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({
          spec: { name: 'dn42_a', kind: 'wireguard', listen_port: 51801, peer: { public_key: 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=' } },
        }),
      });
      if (iface.status !== 201) throw new Error(`interface create answered ${iface.status}: ${await iface.text()}`);
      const { token } = await issueAgentToken(control.url, TOKEN, NODE);

      // The doorbell rings right after the write's commit: that instant starts the clock.
      let committedAt = 0;
      const ring = sys.doorbell.ring.bind(sys.doorbell);
      sys.doorbell.ring = (events: readonly DoorbellEvent[]) => {
        committedAt = stamp();
        return ring(events);
      };
      const deps = fleetDeps(sys.context);
      let frame = '';
      const subject: Side = {
        label: 'hub',
        url: `${control.url.replace(/^http/, 'ws')}/control/v1/agent/ws/${NODE}`,
        headers: { authorization: `Bearer ${token}` },
        async trigger() {
          const outcome = await rollbackGeneration(deps, NODE, 1, { actor: 'bench', recordedAt: sys.clock.now().toISOString() });
          frame = JSON.stringify({ type: 'desired_state_updated', generation: outcome.published[0].generation, reason: outcome.published[0].reason });
          return committedAt;
        },
        held: () => control.sockets!.hub.connectionCount(),
      };
      const baseline: Side = { label: 'bare ws', url: bare.url, headers: {}, trigger: async () => bare.broadcast(frame), held: () => bare.held() };

      for (const n of sizes) {
        progress(`agent-ws: ${n} agents on the hub`);
        const hub = await measureSide(clients, subject, n, rounds, baseline);
        // Pool connections opened by the hub's handshakes idle out after 10 s; freed during the
        // baseline's measurement they would show as negative memory per connection.
        await new Promise((r) => setTimeout(r, 11_000));
        progress(`agent-ws: ${n} clients on a bare ws server`);
        const raw = await measureSide(clients, baseline, n, rounds, subject);
        report({
          bench: 'agent-ws',
          agents: n,
          rounds,
          ...hub,
          baseline: raw,
          // Throughput convention of the README: baseline time / subject time.
          ratio_last_agent_p50: ratio(1 / hub.last_agent_p50_ms, 1 / raw.last_agent_p50_ms),
          ratio_heap_per_connection: round(hub.heap_per_connection_kb / raw.heap_per_connection_kb, 2),
          frame_bytes: Buffer.byteLength(frame),
        });
      }
    } finally {
      clients.stop();
      await bare.close();
      await control.close();
      await sys.close();
    }
  },
};

/** The client process: opens agents, records when each receives an event, reports the instants. */
function runClients(): void {
  let sockets: WebSocket[] = [];
  let expected = 0;
  let stamps: number[] = [];
  const onEvent = () => {
    if (expected === 0) return;
    stamps.push(stamp());
    if (stamps.length === expected) {
      expected = 0;
      process.send!({ stamps });
    }
  };
  const open = (url: string, headers: Record<string, string>) =>
    new Promise<WebSocket | undefined>((resolve) => {
      const ws = new WebSocket(url, { headers, perMessageDeflate: false });
      ws.once('message', () => {
        ws.on('message', onEvent); // after hello, every frame is an event
        resolve(ws);
      });
      ws.once('error', () => resolve(undefined));
      ws.once('close', () => resolve(undefined));
    });
  // The parent went away (a stopped run): leave with it.
  process.on('disconnect', () => process.exit(0));
  process.on('message', async (m: ToClients) => {
    if (m.cmd === 'connect') {
      let failed = 0;
      for (let i = 0; i < m.n; i += 250) {
        const batch = await Promise.all(Array.from({ length: Math.min(250, m.n - i) }, () => open(m.url, m.headers)));
        for (const ws of batch)
          if (ws) sockets.push(ws);
          else failed++;
      }
      process.send!({ ready: sockets.length, failed });
    } else if (m.cmd === 'arm') {
      stamps = [];
      expected = m.n;
      process.send!({ armed: true });
    } else {
      await Promise.all(
        sockets.map((ws) => new Promise<void>((resolve) => (ws.readyState === ws.CLOSED ? resolve() : (ws.once('close', () => resolve()), ws.terminate())))),
      );
      sockets = [];
      process.send!({ disconnected: true });
    }
  });
}

if (process.env.BENCH_AGENT_WS_ROLE === 'clients') runClients();
