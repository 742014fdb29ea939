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
// The clients run in a child process (this file, forked with
// BENCH_FANOUT_ROLE=clients), so that the server's memory and CPU are its own.
import { writeFile } from 'node:fs/promises';
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

interface AgentLogin {
  node_id: string;
  token: string;
}

type ToClients = { cmd: 'connect'; controllerUrl: string; agents: AgentLogin[] } | { cmd: 'arm' } | { cmd: 'refetch' } | { cmd: 'disconnect' };
type Pulled = { at: number; status: number; bytes: number; generation: number | null };
type FromClients = { ready: number; failed: number; initial: Pulled[] } | { armed: true } | { pulled: Pulled[]; errors: string[] } | { disconnected: true };
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

/** The baseline: hello on connect, one broadcast frame on trigger, a static body for every pull. */
async function bareServer(): Promise<{
  controllerUrl: string;
  setBody(bytes: number): void;
  broadcast(frame: string): number;
  held(): number;
  close(): Promise<void>;
}> {
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
    controllerUrl: `http://127.0.0.1:${port}/control/v1`,
    setBody(bytes) {
      const doc = { node_id: 'f00000', generation: 2, reason: 'fleet: prefix block', created_at: new Date().toISOString(), state: { pad: '' } };
      doc.state.pad = 'x'.repeat(Math.max(0, bytes - JSON.stringify(doc).length));
      body = JSON.stringify(doc);
    },
    broadcast(frame) {
      const at = stamp();
      for (const ws of wss.clients) ws.send(frame);
      return at;
    },
    held: () => wss.clients.size,
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

/** Connects the agents; resolves with the memory the server process gained for them, the connect time and the initial pulls. */
async function connect(clients: Clients, controllerUrl: string, agents: AgentLogin[], held: () => number) {
  while (held() > 0) await new Promise((r) => setTimeout(r, 50));
  collectGarbage();
  const before = process.memoryUsage();
  const t0 = stamp();
  clients.send({ cmd: 'connect', controllerUrl, agents });
  const ready = await clients.next<{ ready: number; failed: number; initial: Pulled[] }>(600_000);
  const seconds = (stamp() - t0) / 1000;
  if (ready.ready !== agents.length) throw new Error(`fanout: only ${ready.ready} of ${agents.length} agents connected (${ready.failed} failed)`);
  collectGarbage();
  const after = process.memoryUsage();
  return {
    connect_s: round(seconds),
    initial: ready.initial,
    memory: {
      rss_mb: round(after.rss / 1048576, 1),
      heap_mb: round(after.heapUsed / 1048576, 1),
      rss_per_socket_kb: round((after.rss - before.rss) / agents.length / 1024),
      heap_per_socket_kb: round((after.heapUsed - before.heapUsed) / agents.length / 1024),
    },
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

/** One doorbell round: arms the clients, triggers, collects what each agent pulled. */
async function doorbellRound(clients: Clients, n: number, trigger: () => Promise<{ started: number; answered: number }>) {
  clients.send({ cmd: 'arm' });
  await clients.next<{ armed: true }>();
  const { started, answered } = await trigger();
  const { pulled, errors } = await clients.next<{ pulled: Pulled[]; errors: string[] }>(120_000);
  if (errors.length > 0) throw new Error(`fanout: ${errors.length} pulls failed, e.g. ${errors[0]}`);
  if (pulled.length !== n) throw new Error(`fanout: ${pulled.length} of ${n} agents pulled`);
  return {
    from_start: spread(pulled.map((p) => p.at - started)),
    from_answer: spread(pulled.map((p) => p.at - answered)),
    write_ms: round(answered - started),
    statuses: countBy(pulled.map((p) => p.status)),
    generations: countBy(pulled.map((p) => p.generation ?? 0)),
  };
}

/** The unchanged round: every agent pulls again with its tag at once. */
async function refetchRound(clients: Clients, n: number) {
  const started = stamp();
  clients.send({ cmd: 'refetch' });
  const { pulled, errors } = await clients.next<{ pulled: Pulled[]; errors: string[] }>(120_000);
  if (errors.length > 0) throw new Error(`fanout: ${errors.length} pulls failed, e.g. ${errors[0]}`);
  if (pulled.length !== n) throw new Error(`fanout: ${pulled.length} of ${n} agents pulled`);
  return { ...spread(pulled.map((p) => p.at - started)), statuses: countBy(pulled.map((p) => p.status)) };
}

const countBy = (values: number[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
};

export const fanoutBench: Benchmark = {
  name: 'fanout',
  description: 'N connected agents pull their new desired state after one fleet-wide prefix block (doorbell, conditional GET), vs a bare Express+ws broadcast',
  async run() {
    const n = envInt('BENCH_FANOUT_AGENTS', 1000);
    const sys = await createTestSystem({ env: { ADMIN_TOKEN: TOKEN, LOG_LEVEL: 'silent' } });
    const control = await startApp(createControlApp(sys.context));
    const bare = await bareServer();
    const clients = new ChildPeer<ToClients, FromClients>('fanout client process', import.meta.url, 'BENCH_FANOUT_ROLE', 'clients');
    try {
      progress(`fanout: seeding ${n} published nodes`);
      const t = stamp();
      const ids = await seedNodes(sys, n);
      const seedSeconds = (stamp() - t) / 1000;
      progress(`fanout: ${n} nodes in ${round(seedSeconds)} s; issuing agent tokens`);
      const agents: AgentLogin[] = new Array(n);
      await inBatchesOf(n, 8, async (i) => {
        agents[i] = { node_id: ids[i], token: (await issueAgentToken(control.url, TOKEN, ids[i])).token };
      });
      const hub = control.sockets!.hub;

      progress(`fanout: ${n} agents connecting to the control server`);
      const controllerUrl = `${control.url}/control/v1`;
      const subjectConnect = await connect(clients, controllerUrl, agents, () => bare.held());
      const initialStatuses = countBy(subjectConnect.initial.map((p) => p.status));
      if (initialStatuses['200'] !== n) throw new Error(`fanout: initial pulls ${JSON.stringify(initialStatuses)}`);
      const meanBytes = Math.round(subjectConnect.initial.reduce((s, p) => s + p.bytes, 0) / n);
      const prefix = '172.23.99.0/24';
      const profile = await startProfile();
      const write = await doorbellRound(clients, n, async () => {
        const started = stamp();
        const res = await fetch(`${control.url}/control/v1/admin/fleet/mitigations/prefix-block`, {
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
      if (write.statuses['200'] !== n) throw new Error(`fanout: pulls after the write ${JSON.stringify(write.statuses)}`);
      const unchangedProfile = await startProfile('unchanged');
      const unchanged = await refetchRound(clients, n);
      await unchangedProfile?.stop();
      const connections = hub.connectionCount();
      clients.send({ cmd: 'disconnect' });
      await clients.next<{ disconnected: true }>();

      progress(`fanout: ${n} clients on a bare Express + ws server (static body of ${meanBytes} bytes)`);
      bare.setBody(meanBytes);
      await new Promise((r) => setTimeout(r, 11_000)); // pool connections of the handshakes idle out first (memory)
      const baseConnect = await connect(
        clients,
        bare.controllerUrl,
        agents.map((a) => ({ node_id: a.node_id, token: 'none' })),
        () => hub.connectionCount(),
      );
      const frame = JSON.stringify({ type: 'desired_state_updated', generation: 2, reason: `fleet: prefix block ${prefix}` });
      const base = await doorbellRound(clients, n, async () => {
        const at = bare.broadcast(frame);
        return { started: at, answered: at };
      });
      clients.send({ cmd: 'disconnect' });
      await clients.next<{ disconnected: true }>();

      report({
        bench: 'fanout',
        agents: n,
        connections_on_hub: connections,
        document_bytes_mean: meanBytes,
        seed_s: round(seedSeconds),
        connect_s: subjectConnect.connect_s,
        write_ms: write.write_ms,
        fetched_from_write_start: write.from_start,
        fetched_from_write_answer: write.from_answer,
        pulls_after_write: write.statuses,
        unchanged_round: unchanged,
        server_memory: subjectConnect.memory,
        baseline: {
          connect_s: baseConnect.connect_s,
          fetched_from_broadcast: base.from_start,
          server_memory: baseConnect.memory,
        },
        ratio_p99: round(write.from_start.p99_ms / base.from_start.p99_ms, 2),
        ratio_max: round(write.from_start.max_ms / base.from_start.max_ms, 2),
        loadavg_1m: round(loadavg()[0], 2),
      });
    } finally {
      clients.stop();
      await bare.close();
      await control.close();
      await sys.close();
    }
  },
};

/** The client process: agents with the agent's channel, each pulling as the agent does, instants reported to the parent. */
function runClients(): void {
  const logger = pino({ level: 'silent' });
  type Agent = { login: AgentLogin; etag: string | null; stop: AbortController; done: Promise<unknown> };
  let agents: Agent[] = [];
  let controllerUrl = '';
  let armed = false;
  let pulled: Pulled[] = [];
  let errors: string[] = [];
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
      controllerUrl,
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
  const record = (p: Promise<Pulled>) =>
    p.then(
      (x) => {
        pulled.push(x);
        finish();
      },
      (err: Error) => {
        errors.push(err.message);
        finish();
      },
    );

  process.on('disconnect', () => process.exit(0));
  process.on('message', async (m: ToClients) => {
    if (m.cmd === 'connect') {
      controllerUrl = m.controllerUrl;
      let failed = 0;
      const initial: Pulled[] = [];
      /** One agent's channel until its first pull; a handshake that fails is tried again after 1 s, as the agent's reconnect loop does (5 tries). */
      const open = (login: AgentLogin, tries = 5): Promise<Agent | undefined> =>
        new Promise<Agent | undefined>((resolve) => {
          const agent: Agent = { login, etag: null, stop: new AbortController(), done: Promise.resolve() };
          const rt = { controllerUrl, nodeId: login.node_id, agentToken: () => login.token, logger } as unknown as AgentRuntime;
          let opened = false;
          const channel = new AgentChannel(rt, {
            onOpen: () => undefined,
            onEvent: (event: DoorbellEvent) => {
              if (event.type === 'hello') {
                opened = true;
                // The agent reconciles when its channel opens: the first, unconditional pull.
                pull(agent).then(
                  (p) => (initial.push(p), resolve(agent)),
                  () => resolve(undefined),
                );
              } else if (event.type === 'desired_state_updated' && armed) void record(pull(agent));
            },
          });
          agent.done = channel.run(agent.stop.signal).then(async () => {
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
      process.send!({ ready: agents.length, failed, initial });
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
      for (const agent of agents) void record(pull(agent));
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
