// Fan-out: N agents connected to the control server (the agent's own channel
// code: `WS /agent/ws/{node_id}` with a real agent token, `hello`, doorbells)
// and one fleet-wide write, `POST /admin/fleet/mitigations/prefix-block`, that
// gives every node a new generation. On its `desired_state_updated` each agent
// pulls its document over HTTP as the agent does (`callControl`, with the tag it
// holds in `If-None-Match`). Measured: the time from the write's start, and from
// its answer, until each agent has read its new document (p50/p99/max); then a
// second, unchanged round (every agent pulls again with its tag, as its periodic
// reconcile does): how many 304s and how fast; and the server's memory with the
// N sockets open.
//
// Baseline in the same run: a bare Express + ws server in the same process that
// says `hello`, broadcasts one `desired_state_updated` frame to the same N
// clients and answers the pull with a static body of the documents' mean size
// (no token, no database).
//
// The clients run in child processes (this file, forked with
// BENCH_FANOUT_ROLE=clients; BENCH_FANOUT_CLIENT_PROCESSES of them, by default
// one per 4,000 agents), so that the server's memory and CPU are its own and no
// process needs more than this machine's 20,000 open files (a WebSocket and a
// pull connection per agent).
//
// BENCH_FANOUT_INSTANCES (by default one per 6,000 agents): with one, the control
// server runs in this process, as it always did. With more, each control
// instance runs in a child process of its own (BENCH_FANOUT_ROLE=instance) on the
// one database, as `serve` runs on several machines: agent i connects to instance
// i mod K, the fleet-wide write goes to the first, and the others hear its
// doorbell through PostgreSQL (`NOTIFY dn42_doorbell`, infra/doorbell.ts). The
// baseline is split the same way (K bare servers, each in its own process, the
// same agents on each), and memory is reported per instance.
import { readFile, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import express from 'express';
import pino from 'pino';
import { WebSocketServer } from 'ws';
import { AgentChannel, type DoorbellEvent } from '../agent/channel.js';
import { callControl } from '../agent/http.js';
import type { AgentRuntime } from '../agent/runtime.js';
import { writeNode } from '../commands/node-write.js';
import { nextIds } from '../commands/ids.js';
import { peeringRecord } from '../domain/node/provision.js';
import type { NodeCommand } from '../domain/node/decide.js';
import { createControlApp } from '../http/control/app.js';
import { fleetDeps } from '../http/control/fleet/common.js';
import { listenOptions } from '../http/shared/server-limits.js';
import { issueAgentToken } from '../spec/support/agents.js';
import type { TestDatabase } from '../spec/support/database.js';
import { createTestSystem, startApp, type TestSystem } from '../spec/support/system.js';
import { collectGarbage, envInt, percentile, progress, report, round, type Benchmark, ChildPeer } from './support.js';

const TOKEN = 'bench-admin-token-0123456789abcdef';
const PUBLIC_KEY = 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
/** External peerings per node: each a WireGuard interface and a BGP session, as a small real node has. */
const PEERINGS = 4;

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes of one machine. */
const stamp = (): number => performance.timeOrigin + performance.now();
const nodeName = (i: number) => `f${String(i).padStart(5, '0')}`;

/** Runs `work` over 0..count-1 with at most `parallel` at a time. */
async function inBatchesOf(count: number, parallel: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

/** Agents per control instance and per client process by default: 2 descriptors each, well below the 20,000 a process may open here. */
const AGENTS_PER_INSTANCE = 6000;
const AGENTS_PER_CLIENT_PROCESS = 4000;

interface AgentLogin {
  node_id: string;
  token: string;
  /** The API base of the instance the agent is connected to. */
  url: string;
}

type ToClients = { cmd: 'connect'; agents: AgentLogin[] } | { cmd: 'arm' } | { cmd: 'refetch' } | { cmd: 'disconnect' };
type Pulled = { at: number; status: number; bytes: number; generation: number | null };
/** A pull that failed (the agent's 30 s request timeout, a refused connection): which server, what. */
type Failed = { url: string; message: string };
type FromClients =
  { ready: number; failed: number; why: string[]; initial: Pulled[] } | { armed: true } | { pulled: Pulled[]; errors: Failed[] } | { disconnected: true };
type Clients = ChildPeer<ToClients, FromClients>;

/**
 * N published nodes, each created with PEERINGS external peerings (interface
 * and session) in one write through the write command (`publish: 'always'`:
 * generation 1). Parallel writes of distinct nodes.
 */
async function seedNodes(sys: TestSystem, n: number): Promise<string[]> {
  const deps = fleetDeps(sys.context);
  const [peerings, interfaces, sessions] = [
    await nextIds(deps.db, 'peering', n * PEERINGS),
    await nextIds(deps.db, 'interface', n * PEERINGS),
    await nextIds(deps.db, 'bgp_session', n * PEERINGS),
  ];
  const ids = Array.from({ length: n }, (_, i) => nodeName(i));
  await inBatchesOf(n, 8, async (i) => {
    const node_id = ids[i];
    const commands: NodeCommand[] = [
      {
        type: 'CreateNode',
        node_id,
        fields: {
          asn: 4242420001,
          router_id: `172.20.${Math.floor(i / 250)}.${(i % 250) + 1}`,
          site: `site${i % 20}`,
          link_local: 'fe80::1',
          ipv4_prefixes: [],
          ipv6_prefixes: [],
          base_template: { runtime: { wireguard_port_range: '20000-29999' } },
        } as never,
      },
    ];
    for (let k = 0; k < PEERINGS; k++) {
      const j = i * PEERINGS + k;
      const name = `ext${k}`;
      commands.push(
        { type: 'CreatePeering', node_id, peering: peeringRecord(peerings[j], { name, remote_asn: 4242421000 + k }), remoteExists: true },
        {
          type: 'CreateInterface',
          node_id,
          interface: {
            id: interfaces[j],
            peering_id: peerings[j],
            spec: { name, kind: 'wireguard', listen_port: 21000 + k, peer: { public_key: PUBLIC_KEY, endpoint: `${name}.example.net:51820` } } as never,
            enabled: true,
            sort_order: k,
          },
        },
        {
          type: 'CreateSession',
          node_id,
          session: {
            id: sessions[j],
            peering_id: peerings[j],
            spec: { name, remote_asn: 4242421000 + k, neighbor_address: 'fe80::2', interface: name } as never,
            sort_order: k,
          },
        },
      );
    }
    await writeNode(deps, node_id, () => ({ commands, reason: 'seed', result: undefined }), {
      actor: 'bench',
    });
  });
  return ids;
}

/** A server process's memory after a full GC. */
interface Memory {
  rss: number;
  heapUsed: number;
}

function ownMemory(): Memory {
  collectGarbage();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

/** A server the agents connect to (a control instance or a bare one), in this process or in a child process of its own. */
interface Endpoint {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The API base the agents are given. */
  controllerUrl: string;
  /** Agent sockets it holds. */
  held(): Promise<number>;
  memory(): Promise<Memory>;
  /** The bare server's static body (its size in bytes). */
  setBody(bytes: number): Promise<void>;
  /** The bare server's broadcast: answers the instant it started. */
  broadcast(frame: string): Promise<number>;
  close(): Promise<void>;
}

const bareOnly = (): Promise<never> => Promise.reject(new Error('fanout: only the bare server broadcasts'));

/** A control instance (`startApp` of the control app, agent sockets attached) on `sys`. */
async function controlServer(sys: TestSystem): Promise<Endpoint> {
  const control = await startApp(createControlApp(sys.context));
  const hub = control.sockets!.hub;
  return {
    url: control.url,
    controllerUrl: `${control.url}/control/v1`,
    held: async () => hub.connectionCount(),
    memory: async () => ownMemory(),
    setBody: bareOnly,
    broadcast: bareOnly,
    close: () => control.close(),
  };
}

/** The baseline: hello on connect, one broadcast frame on trigger, a static body for every pull. */
async function bareServer(): Promise<Endpoint> {
  let body = '{}';
  const app = express();
  app.disable('etag');
  app.get('/control/v1/agent/desired-state', (_req, res) => {
    res.type('application/json').send(body);
  });
  const server = app.listen(listenOptions(0, '127.0.0.1')); // the control server's backlog: the comparison is of the rest
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (ws, req) => ws.send(JSON.stringify({ type: 'hello', node_id: req.url?.split('/').pop() })));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    controllerUrl: `http://127.0.0.1:${port}/control/v1`,
    memory: async () => ownMemory(),
    async setBody(bytes) {
      const doc = { node_id: 'f00000', generation: 2, reason: 'fleet: prefix block', created_at: new Date().toISOString(), state: { pad: '' } };
      doc.state.pad = 'x'.repeat(Math.max(0, bytes - JSON.stringify(doc).length));
      body = JSON.stringify(doc);
    },
    async broadcast(frame) {
      const at = stamp();
      for (const ws of wss.clients) ws.send(frame);
      return at;
    },
    held: async () => wss.clients.size,
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface Round {
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
}

function spread(values: number[]): Round {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50_ms: round(percentile(sorted, 50)), p99_ms: round(percentile(sorted, 99)), max_ms: round(sorted[sorted.length - 1]) };
}

/** `items` in `parts` contiguous slices of nearly equal length. */
function sliced<T>(items: readonly T[], parts: number): T[][] {
  const size = Math.ceil(items.length / parts);
  return Array.from({ length: parts }, (_, i) => items.slice(i * size, (i + 1) * size));
}

const held = async (servers: readonly Endpoint[]): Promise<number> => (await Promise.all(servers.map((s) => s.held()))).reduce((a, b) => a + b, 0);

/** Every client process's next message. */
const fromAll = <T extends FromClients>(clients: readonly Clients[], timeoutMs = 120_000): Promise<T[]> =>
  Promise.all(clients.map((c) => c.next<T>(timeoutMs)));

/**
 * Connects the agents (each to the server its `url` names, split over the client
 * processes) once `others` hold no socket; resolves with the connect time, the
 * initial pulls and the memory each server process gained for its agents (one
 * figure with one server, a list with several).
 */
async function connect(clients: readonly Clients[], servers: readonly Endpoint[], agents: AgentLogin[], others: readonly Endpoint[]) {
  while ((await held(others)) > 0) await new Promise((r) => setTimeout(r, 50));
  const before = await Promise.all(servers.map((s) => s.memory()));
  const t0 = stamp();
  sliced(agents, clients.length).forEach((part, i) => clients[i].send({ cmd: 'connect', agents: part }));
  const readies = await fromAll<{ ready: number; failed: number; why: string[]; initial: Pulled[] }>(clients, 600_000);
  const seconds = (stamp() - t0) / 1000;
  const ready = readies.reduce((sum, r) => sum + r.ready, 0);
  const failed = readies.reduce((sum, r) => sum + r.failed, 0);
  if (ready !== agents.length)
    throw new Error(`fanout: only ${ready} of ${agents.length} agents connected (${failed} failed: ${readies.flatMap((r) => r.why).join('; ')})`);
  const after = await Promise.all(servers.map((s) => s.memory()));
  const memory = servers.map((s, i) => {
    const count = agents.filter((a) => a.url === s.controllerUrl).length;
    return {
      ...(servers.length > 1 ? { agents: count } : {}),
      rss_mb: round(after[i].rss / 1048576, 1),
      heap_mb: round(after[i].heapUsed / 1048576, 1),
      rss_per_socket_kb: round((after[i].rss - before[i].rss) / count / 1024),
      heap_per_socket_kb: round((after[i].heapUsed - before[i].heapUsed) / count / 1024),
    };
  });
  return {
    connect_s: round(seconds),
    initial: readies.flatMap((r) => r.initial),
    memory: memory.length === 1 ? memory[0] : memory,
  };
}

/**
 * With BENCH_FANOUT_PROFILE=<file>, the server process's CPU profile of the
 * write round (write, doorbell, pulls) goes to that file, and the unchanged
 * round's to `<file>.unchanged.cpuprofile` (open them in Chrome's DevTools or
 * speedscope).
 */
async function startProfile(round?: string): Promise<{ stop(): Promise<void> } | undefined> {
  const base = process.env.BENCH_FANOUT_PROFILE;
  if (!base) return undefined;
  const path = round ? base.replace(/(\.cpuprofile)?$/, `.${round}.cpuprofile`) : base;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(path, JSON.stringify(profile));
      session.disconnect();
      progress(`fanout: CPU profile of the ${round ?? 'write'} round in ${path}`);
    },
  };
}

/** What every client process pulled in a round, together. */
async function pulledByAll(clients: readonly Clients[]): Promise<{ pulled: Pulled[]; errors: Failed[] }> {
  const parts = await fromAll<{ pulled: Pulled[]; errors: Failed[] }>(clients, 300_000);
  return { pulled: parts.flatMap((p) => p.pulled), errors: parts.flatMap((p) => p.errors) };
}

/**
 * The kernel's count of connections dropped because a listen queue was full
 * (`TcpExtListenOverflows`, machine-wide: other processes' listeners count too).
 */
async function listenOverflows(): Promise<number> {
  const lines = (await readFile('/proc/net/netstat', 'utf8').catch(() => '')).split('\n').filter((l) => l.startsWith('TcpExt:'));
  if (lines.length < 2) return NaN;
  const names = lines[0].split(/\s+/);
  return Number(lines[1].split(/\s+/)[names.indexOf('ListenOverflows')]);
}

/**
 * Failed pulls of a round: none, or how many, by server (its index in `servers`)
 * and by message. A failed pull is not retried within the round (the agent pulls
 * again at its next reconcile), so the round's spreads are over the agents that
 * fetched: with failures, its p99 over all agents is above the agent's 30 s timeout.
 */
function failures(errors: readonly Failed[], servers: readonly Endpoint[]) {
  if (errors.length === 0) return undefined;
  return {
    count: errors.length,
    by_server: servers.map((s) => errors.filter((e) => e.url === s.controllerUrl).length),
    messages: errors.reduce<Record<string, number>>((out, e) => ((out[e.message] = (out[e.message] ?? 0) + 1), out), {}),
  };
}

/** One doorbell round: arms the clients, triggers, collects what each agent pulled. */
async function doorbellRound(
  clients: readonly Clients[],
  servers: readonly Endpoint[],
  n: number,
  trigger: () => Promise<{ started: number; answered: number }>,
) {
  for (const c of clients) c.send({ cmd: 'arm' });
  await fromAll<{ armed: true }>(clients);
  const overflowsBefore = await listenOverflows();
  const { started, answered } = await trigger();
  const { pulled, errors } = await pulledByAll(clients);
  const overflows = (await listenOverflows()) - overflowsBefore;
  if (pulled.length + errors.length !== n) throw new Error(`fanout: ${pulled.length + errors.length} of ${n} agents pulled`);
  if (errors.length > 0) progress(`fanout: ${errors.length} pulls failed, e.g. ${errors[0].url}: ${errors[0].message}`);
  return {
    failed: failures(errors, servers),
    listen_overflows: overflows,
    from_start: spread(pulled.map((p) => p.at - started)),
    from_answer: spread(pulled.map((p) => p.at - answered)),
    write_ms: round(answered - started),
    statuses: countBy(pulled.map((p) => p.status)),
    generations: countBy(pulled.map((p) => p.generation ?? 0)),
  };
}

/** The unchanged round: every agent pulls again with its tag at once. */
async function refetchRound(clients: readonly Clients[], servers: readonly Endpoint[], n: number) {
  const overflowsBefore = await listenOverflows();
  const started = stamp();
  for (const c of clients) c.send({ cmd: 'refetch' });
  const { pulled, errors } = await pulledByAll(clients);
  const overflows = (await listenOverflows()) - overflowsBefore;
  if (pulled.length + errors.length !== n) throw new Error(`fanout: ${pulled.length + errors.length} of ${n} agents pulled`);
  return {
    ...spread(pulled.map((p) => p.at - started)),
    statuses: countBy(pulled.map((p) => p.status)),
    failed: failures(errors, servers),
    listen_overflows: overflows,
  };
}

const countBy = (values: number[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
};

type ToInstance =
  | { cmd: 'start'; kind: 'control' | 'bare'; database?: { name: string; url: string } }
  | { cmd: 'held' }
  | { cmd: 'memory' }
  | { cmd: 'setBody'; bytes: number }
  | { cmd: 'broadcast'; frame: string }
  | { cmd: 'close' };
type FromInstance = { url: string; controllerUrl: string } | { held: number } | { memory: Memory } | { at: number } | { done: true };

/** A server in a child process of its own (BENCH_FANOUT_ROLE=instance): a control instance on `database`, or a bare one. */
async function childServer(kind: 'control' | 'bare', database?: TestDatabase): Promise<Endpoint> {
  // The node options of `npm run bench`: the same collector settings as a server in this process.
  const peer = new ChildPeer<ToInstance, FromInstance>(`fanout ${kind} instance`, import.meta.url, 'BENCH_FANOUT_ROLE', 'instance', [
    '--expose-gc',
    '--max-semi-space-size=64',
  ]);
  try {
    const { url, controllerUrl } = await peer.ask<{ url: string; controllerUrl: string }>(
      { cmd: 'start', kind, ...(database ? { database: { name: database.name, url: database.url } } : {}) },
      120_000,
    );
    return {
      url,
      controllerUrl,
      held: async () => (await peer.ask<{ held: number }>({ cmd: 'held' }, 60_000)).held,
      memory: async () => (await peer.ask<{ memory: Memory }>({ cmd: 'memory' }, 60_000)).memory,
      setBody: async (bytes) => void (await peer.ask({ cmd: 'setBody', bytes }, 60_000)),
      broadcast: async (frame) => (await peer.ask<{ at: number }>({ cmd: 'broadcast', frame }, 60_000)).at,
      close: async () => {
        try {
          await peer.ask({ cmd: 'close' }, 60_000);
        } finally {
          peer.stop();
        }
      },
    };
  } catch (err) {
    peer.stop();
    throw err;
  }
}

/** The instance process: one server, driven by the parent. */
function runInstance(): void {
  let server: Endpoint | undefined;
  let sys: TestSystem | undefined;
  const answer = async (m: ToInstance): Promise<FromInstance> => {
    switch (m.cmd) {
      case 'start':
        if (m.kind === 'control') {
          sys = await createTestSystem({ env: { ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent' }, database: { ...m.database!, drop: async () => {} } });
          server = await controlServer(sys);
        } else server = await bareServer();
        return { url: server.url, controllerUrl: server.controllerUrl };
      case 'held':
        return { held: await server!.held() };
      case 'memory':
        return { memory: await server!.memory() };
      case 'setBody':
        await server!.setBody(m.bytes);
        return { done: true };
      case 'broadcast':
        return { at: await server!.broadcast(m.frame) };
      case 'close':
        await server?.close();
        await sys?.close();
        return { done: true };
    }
  };
  process.on('disconnect', () => process.exit(0));
  process.on('message', (m: ToInstance) => {
    answer(m).then(
      (reply) => process.send!(reply),
      (err: Error) => {
        progress(`fanout instance: ${err.stack ?? err.message}`);
        process.exit(1);
      },
    );
  });
}

export const fanoutBench: Benchmark = {
  name: 'fanout',
  description: 'N connected agents pull their new desired state after one fleet-wide prefix block (doorbell, conditional GET), vs a bare Express+ws broadcast',
  async run() {
    const n = envInt('BENCH_FANOUT_AGENTS', 1000);
    const k = envInt('BENCH_FANOUT_INSTANCES', Math.ceil(n / AGENTS_PER_INSTANCE));
    const p = Math.min(n, envInt('BENCH_FANOUT_CLIENT_PROCESSES', Math.ceil(n / AGENTS_PER_CLIENT_PROCESS)));
    const sys = await createTestSystem({ env: { ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent' } });
    const subjects: Endpoint[] = [];
    const bares: Endpoint[] = [];
    const clients: Clients[] = [];
    try {
      // One instance: the server in this process, as before. Several: each in a process of its own, started after the seed.
      if (k === 1) subjects.push(await controlServer(sys));
      progress(`fanout: seeding ${n} published nodes`);
      const t = stamp();
      const ids = await seedNodes(sys, n);
      const seedSeconds = (stamp() - t) / 1000;
      if (k > 1) {
        progress(`fanout: ${n} nodes in ${round(seedSeconds)} s; starting ${k} control instances on the database`);
        subjects.push(...(await Promise.all(Array.from({ length: k }, () => childServer('control', sys.db)))));
        bares.push(...(await Promise.all(Array.from({ length: k }, () => childServer('bare')))));
      } else bares.push(await bareServer());
      for (let c = 0; c < p; c++)
        clients.push(new ChildPeer<ToClients, FromClients>(`fanout client process ${c + 1}`, import.meta.url, 'BENCH_FANOUT_ROLE', 'clients'));
      progress(`fanout: ${n} nodes in ${round(seedSeconds)} s; issuing agent tokens`);
      const agents: AgentLogin[] = new Array(n);
      await inBatchesOf(n, 8, async (i) => {
        agents[i] = { node_id: ids[i], token: (await issueAgentToken(subjects[0].url, TOKEN, ids[i])).token, url: subjects[i % k].controllerUrl };
      });

      progress(`fanout: ${n} agents connecting to ${k} control instance(s) from ${p} client process(es)`);
      const subjectConnect = await connect(clients, subjects, agents, bares);
      const initialStatuses = countBy(subjectConnect.initial.map((x) => x.status));
      if (initialStatuses['200'] !== n) throw new Error(`fanout: initial pulls ${JSON.stringify(initialStatuses)}`);
      const meanBytes = Math.round(subjectConnect.initial.reduce((sum, x) => sum + x.bytes, 0) / n);
      const prefix = '172.23.99.0/24';
      const profile = await startProfile();
      const write = await doorbellRound(clients, subjects, n, async () => {
        const started = stamp();
        const res = await fetch(`${subjects[0].controllerUrl}/admin/fleet/mitigations/prefix-block`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify({ prefix }),
        });
        const answer = (await res.json()) as { changed?: Record<string, number> };
        const answered = stamp();
        if (res.status !== 200 || Object.keys(answer.changed ?? {}).length !== n)
          throw new Error(`prefix block answered ${res.status} with ${Object.keys(answer.changed ?? {}).length} changed nodes`);
        return { started, answered };
      });
      await profile?.stop();
      if ((write.statuses['200'] ?? 0) + (write.failed?.count ?? 0) !== n) throw new Error(`fanout: pulls after the write ${JSON.stringify(write.statuses)}`);
      const unchangedProfile = await startProfile('unchanged');
      const unchanged = await refetchRound(clients, subjects, n);
      await unchangedProfile?.stop();
      const connections = await held(subjects);
      for (const c of clients) c.send({ cmd: 'disconnect' });
      await fromAll<{ disconnected: true }>(clients);

      progress(`fanout: ${n} clients on ${k} bare Express + ws server(s) (static body of ${meanBytes} bytes)`);
      for (const b of bares) await b.setBody(meanBytes);
      await new Promise((r) => setTimeout(r, 11_000)); // pool connections of the handshakes idle out first (memory)
      const baseConnect = await connect(
        clients,
        bares,
        agents.map((a, i) => ({ node_id: a.node_id, token: 'none', url: bares[i % k].controllerUrl })),
        subjects,
      );
      const frame = JSON.stringify({ type: 'desired_state_updated', generation: 2, reason: `fleet: prefix block ${prefix}` });
      const base = await doorbellRound(clients, bares, n, async () => {
        // From the first broadcast's start (one server: its own instant, as before).
        const at = Math.min(...(await Promise.all(bares.map((b) => b.broadcast(frame)))));
        return { started: at, answered: at };
      });
      for (const c of clients) c.send({ cmd: 'disconnect' });
      await fromAll<{ disconnected: true }>(clients);

      report({
        bench: 'fanout',
        agents: n,
        instances: k,
        client_processes: p,
        connections_on_hub: connections,
        document_bytes_mean: meanBytes,
        seed_s: round(seedSeconds),
        connect_s: subjectConnect.connect_s,
        write_ms: write.write_ms,
        fetched_from_write_start: write.from_start,
        fetched_from_write_answer: write.from_answer,
        pulls_after_write: write.statuses,
        ...(write.failed ? { pulls_failed_after_write: write.failed } : {}),
        listen_overflows_after_write: write.listen_overflows,
        unchanged_round: unchanged,
        server_memory: subjectConnect.memory,
        baseline: {
          connect_s: baseConnect.connect_s,
          fetched_from_broadcast: base.from_start,
          ...(base.failed ? { pulls_failed: base.failed } : {}),
          listen_overflows: base.listen_overflows,
          server_memory: baseConnect.memory,
        },
        ratio_p99: round(write.from_start.p99_ms / base.from_start.p99_ms, 2),
        ratio_max: round(write.from_start.max_ms / base.from_start.max_ms, 2),
        loadavg_1m: round(loadavg()[0], 2),
      });
    } finally {
      for (const c of clients) c.stop();
      await Promise.all([...bares, ...subjects].map((s) => s.close().catch((err: Error) => progress(`fanout: closing a server: ${err.message}`))));
      await sys.close();
    }
  },
};

/** The client process: agents with the agent's channel, each pulling as the agent does, instants reported to the parent. */
function runClients(): void {
  const logger = pino({ level: 'silent' });
  type Agent = { login: AgentLogin; etag: string | null; stop: AbortController; done: Promise<unknown> };
  let agents: Agent[] = [];
  let armed = false;
  let pulled: Pulled[] = [];
  let errors: Failed[] = [];
  let expected = 0;

  const finish = () => {
    if (pulled.length + errors.length === expected && expected > 0) {
      expected = 0;
      process.send!({ pulled, errors });
    }
  };
  /** `GET /agent/desired-state` as the agent sends it: Bearer, and the held tag in If-None-Match. */
  const pull = async (agent: Agent): Promise<Pulled> => {
    const answer = await callControl<{ generation?: number } | null>(
      agent.login.url,
      'GET',
      '/agent/desired-state',
      undefined,
      agent.login.token,
      agent.etag ? { 'if-none-match': agent.etag } : {},
    );
    const at = stamp();
    if (answer.status === 200 && answer.etag) agent.etag = answer.etag;
    if (answer.status !== 200 && answer.status !== 304) throw new Error(`${agent.login.node_id}: ${answer.status}`);
    return { at, status: answer.status, bytes: answer.status === 200 ? JSON.stringify(answer.body).length : 0, generation: answer.body?.generation ?? null };
  };
  const record = (agent: Agent, p: Promise<Pulled>) =>
    p.then(
      (x) => {
        pulled.push(x);
        finish();
      },
      (err: Error) => {
        // fetch's `fetch failed` says why in its cause (a reset, a refused connection, the other side closed)
        const cause = (err.cause as { code?: string; message?: string } | undefined) ?? {};
        errors.push({ url: agent.login.url, message: cause.code || cause.message ? `${err.message}: ${cause.code ?? cause.message}` : err.message });
        finish();
      },
    );

  process.on('disconnect', () => process.exit(0));
  process.on('message', async (m: ToClients) => {
    if (m.cmd === 'connect') {
      let failed = 0;
      const why: string[] = [];
      const initial: Pulled[] = [];
      /** One agent's channel until its first pull; a handshake that fails is tried again after 1 s, as the agent's reconnect loop does (5 tries). */
      const open = (login: AgentLogin, tries = 5): Promise<Agent | undefined> =>
        new Promise<Agent | undefined>((resolve) => {
          const agent: Agent = { login, etag: null, stop: new AbortController(), done: Promise.resolve() };
          const rt = { controllerUrl: login.url, nodeId: login.node_id, agentToken: () => login.token, logger } as unknown as AgentRuntime;
          let opened = false;
          const channel = new AgentChannel(rt, {
            onOpen: () => undefined,
            onEvent: (event: DoorbellEvent) => {
              if (event.type === 'hello') {
                opened = true;
                // The agent reconciles when its channel opens: the first, unconditional pull.
                pull(agent).then(
                  (p) => (initial.push(p), resolve(agent)),
                  (err: Error) => (why.push(`${login.node_id}: first pull: ${err.message}`), resolve(undefined)),
                );
              } else if (event.type === 'desired_state_updated' && armed) void record(agent, pull(agent));
            },
          });
          agent.done = channel.run(agent.stop.signal).then(async ({ code, reason }) => {
            if (!opened && tries <= 1) why.push(`${login.node_id}: channel closed ${code} ${reason}`);
            if (opened || tries <= 1 || agent.stop.signal.aborted) return resolve(undefined);
            await new Promise((r) => setTimeout(r, 1000));
            resolve(await open(login, tries - 1));
          });
        });
      for (let i = 0; i < m.agents.length; i += 100) {
        for (const agent of await Promise.all(m.agents.slice(i, i + 100).map((login) => open(login))))
          if (agent) agents.push(agent);
          else failed++;
      }
      process.send!({ ready: agents.length, failed, why: why.slice(0, 5), initial });
    } else if (m.cmd === 'arm') {
      pulled = [];
      errors = [];
      expected = agents.length;
      armed = true;
      process.send!({ armed: true });
    } else if (m.cmd === 'refetch') {
      armed = false;
      pulled = [];
      errors = [];
      expected = agents.length;
      for (const agent of agents) void record(agent, pull(agent));
    } else {
      armed = false;
      for (const agent of agents) agent.stop.abort();
      await Promise.all(agents.map((a) => a.done));
      agents = [];
      process.send!({ disconnected: true });
    }
  });
}

if (process.env.BENCH_FANOUT_ROLE === 'clients') runClients();
else if (process.env.BENCH_FANOUT_ROLE === 'instance') runInstance();
