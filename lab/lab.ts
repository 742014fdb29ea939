import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { convergence, type Convergence } from './converge.js';
import { attempt, LabError, run, sleep, waitFor, type CommandOutcome } from './exec.js';
import { createInternalLink, createNode, enrollmentToken, MAX_NODES, nodeRecord, openForAutopeering } from './fleet.js';
import { client, expectStatus, type Client } from './http.js';
import {
  addNamespace,
  attach,
  checkHost,
  enableForwarding,
  inNamespace,
  kernelWireguard,
  listLabNamespaces,
  makeInternet,
  peerPublicIp,
  removeNamespace,
} from './netns.js';
import {
  agentKnowsWireguardGo,
  startAgent,
  startNodeBird,
  startNodeRelay,
  startRootRelay,
  stopAgent,
  wgDirOf,
  wireguardGoLink,
  writeAgentConfig,
} from './nodes.js';
import { applyPeerConfig, preparePeer, requestPeering, runPostUp } from './peers.js';
import { alive, cmdlineOf, markedProcesses, stopProcess } from './processes.js';
import { addPeerNetwork, FLEET_ASN, peerIdentity, writeLabRegistry, writeRouteObjects, DEMO_MNT } from './registry.js';
import {
  controlUrl,
  createExternalDatabase,
  dropExternalDatabase,
  ensureBuilds,
  freePort,
  identityUrl,
  startServers,
  stopServers,
  SERVER_PROCESS,
} from './servers.js';
import {
  DEFAULT_STATE_DIR,
  LAB_MARK,
  labPaths,
  readState,
  writeState,
  type LabNodeRecord,
  type LabPeerRecord,
  type LabState,
  type WireguardChoice,
  type WireguardKind,
} from './state.js';

/**
 * A whole dn42 network on this machine (issue 29, part 2): the servers on
 * loopback, N routing nodes with BIRD and the real agent in network
 * namespaces, M external peers that set up their peerings through the portal,
 * joined by a bridge on 198.18.0.0/24. `startLab` answers a handle once every
 * BGP session is Established and every prefix is in every table; `stopLab`
 * removes all of it. The command line (`npm run lab`) and the lab scenarios
 * (spec/lab/) both stand on these.
 */

export interface LabOptions {
  nodes?: number;
  peers?: number;
  wireguard?: WireguardChoice;
  /** Default `<project>/.data/dn42lab`. */
  stateDir?: string;
  /** Seconds `startLab` waits for convergence once the agents run (default 240). */
  convergeTimeoutS?: number;
  /** Leave a lab that did not converge running, for a look (default false: it is taken down). */
  keepOnFailure?: boolean;
  /** The servers' FLAP_TIME_SCALE (default 1, document 3's 30-minute session half-life): the flap scenario speeds the flap clock up to see an alert clear. */
  flapTimeScale?: number;
  /** Progress lines (default: none). */
  say?: (line: string) => void;
}

/** What `npm run lab -- status` prints, and the last line of `up`. */
export interface LabStatus {
  lab: 'up' | 'degraded' | 'starting' | 'down';
  nodes: number;
  peers: number;
  sessions_total: number;
  sessions_established: number;
  routes_ok: boolean;
  converge_s: number | null;
  wireguard: WireguardKind | null;
  control_url: string | null;
  console_url: string | null;
  portal_url: string | null;
  /** When not `up`: what is not converged or not running. */
  problems?: string[];
}

export interface LabNode {
  id: string;
  ns: string;
  index: number;
  publicIp: string;
  asn: number;
  loopbackIpv4: string;
  loopbackIpv6: string;
  ipv4Prefix: string;
  ipv6Prefix: string;
  birdSocket: string;
  /** The agent's state dir (agent-token, applied.json, rendered files). */
  agentStateDir: string;
}

export interface LabPeer {
  name: string;
  ns: string;
  asn: number;
  nodeId: string;
  ipv4Prefix: string;
  ipv6Prefix: string;
  /** The peer's WireGuard interface (the portal's name, `dn42_<our ASN's last four digits>`). */
  interface: string;
  /** BIRD protocol names of the portal's snippet. */
  protocols: string[];
  requestId: number;
  birdSocket: string;
}

export interface LabHandle {
  readonly stateDir: string;
  readonly wireguard: WireguardKind;
  readonly controlUrl: string;
  readonly identityUrl: string;
  readonly consoleUrl: string;
  readonly portalUrl: string;
  readonly adminToken: string;
  /** A client of `/control/v1` with the admin token. */
  readonly admin: Client;
  readonly nodes: readonly LabNode[];
  readonly peers: readonly LabPeer[];
  /** Seconds from the agents' start to convergence. */
  readonly convergeS: number;
  /** Runs `argv` in a node's or peer's namespace (by node id, peer name or namespace), with that namespace's private /run/wireguard. */
  exec(where: string, argv: readonly string[], timeoutMs?: number): Promise<CommandOutcome>;
  /** `birdc -s <its socket> ...` of a node or peer; answers stdout, throws on failure. */
  birdc(where: string, ...args: string[]): Promise<string>;
  /** `wg ...` in a node's or peer's namespace; answers stdout, throws on failure. */
  wg(where: string, ...args: string[]): Promise<string>;
  /** The sessions and routes as the routers see them now. */
  convergence(): Promise<Convergence>;
  /** Waits until everything has converged (throws naming what has not). Answers the seconds it took. */
  waitConverged(timeoutMs?: number): Promise<number>;
  status(): Promise<LabStatus>;
  /** A portal client of a peer, logged in as its ASN (`/control/v1` base). */
  portal(peer: string): Client;
  /** Stops the servers (control, identity, registry, projections) and starts them again on the same ports and database. */
  stopControl(): Promise<void>;
  startControl(): Promise<void>;
  /** The agent daemon of a node: its pid, kill (default SIGKILL), start again. */
  agentPid(nodeId: string): number | null;
  killAgent(nodeId: string, signal?: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  startAgent(nodeId: string): Promise<void>;
  /** pids of the wireguard-go processes in a node's or peer's namespace, by interface name. */
  wireguardGoPids(where: string): Promise<Record<string, number>>;
  /** Takes a peer's tunnel interface down or up (`ip link set`), as a flapping link would. */
  setPeerTunnel(peer: string, up: boolean): Promise<void>;
  /** Removes everything the lab made. */
  down(): Promise<void>;
}

const NAME_OF = (state: LabState, where: string): { ns: string; dir: string; socket: string } => {
  const node = state.nodes.find((n) => n.node_id === where || n.ns === where);
  if (node) return { ns: node.ns, dir: node.dir, socket: node.bird_socket };
  const peer = state.peers.find((p) => p.name === where || p.ns === where);
  if (peer) return { ns: peer.ns, dir: peer.dir, socket: peer.bird_socket };
  throw new LabError(`no node or peer ${where} in the lab`);
};

const urlsOf = (state: LabState) => ({
  control: controlUrl(state),
  console: `${controlUrl(state)}/console/`,
  portal: `${controlUrl(state)}/portal/`,
});

/** Brings a lab up and answers its handle once it has converged. */
export async function startLab(options: LabOptions = {}): Promise<LabHandle> {
  const say = options.say ?? (() => {});
  const nodes = options.nodes ?? 3;
  const peers = options.peers ?? 1;
  if (!Number.isInteger(nodes) || nodes < 2 || nodes > MAX_NODES)
    throw new LabError(`--nodes must be 2 to ${MAX_NODES} (a node is published with its first link or peering; one alone has nothing for its agent to fetch)`);
  if (!Number.isInteger(peers) || peers < 0 || peers > 50) throw new LabError('--peers must be 0 to 50');
  const stateDir = resolve(options.stateDir ?? DEFAULT_STATE_DIR);
  if (!stateDir.includes(LAB_MARK)) throw new LabError(`the lab's state dir must carry ${LAB_MARK} in its path (got ${stateDir})`);

  await checkHost();
  const wireguard = await chooseWireguard(options.wireguard ?? 'auto');
  if (wireguard === 'userspace' && !agentKnowsWireguardGo())
    say('note: this agent has no userspace WireGuard setting yet (command.wireguard_go); its interfaces will fail to apply');

  const existing = readState(stateDir);
  if (existing && existing.processes.some((p) => alive(p.pid))) throw new LabError(`a lab is already running in ${stateDir}: run npm run lab -- down first`);
  if (existing || (await listLabNamespaces()).length > 0) {
    say('removing the leftovers of an earlier lab');
    await stopLab(stateDir);
  }

  const paths = labPaths(stateDir);
  rmSync(paths.logs, { recursive: true, force: true });
  for (const dir of [paths.dir, paths.logs, paths.bin]) mkdirSync(dir, { recursive: true });
  const state: LabState = {
    state_dir: stateDir,
    started_at: new Date().toISOString(),
    nodes_wanted: nodes,
    peers_wanted: peers,
    wireguard,
    flap_time_scale: options.flapTimeScale ?? 1,
    ports: { control: await freePort(), identity: await freePort(), registry: await freePort(), site: await freePort() },
    database: { kind: 'embedded' },
    admin_token: null,
    namespaces: [],
    processes: [],
    nodes: [],
    peers: [],
    converged_s: null,
    phase: 'starting',
  };
  writeState(state);

  try {
    if (process.env.DATABASE_URL) {
      const made = await createExternalDatabase(process.env.DATABASE_URL);
      state.database = made.database;
      writeState(state);
      say(`database ${made.database.name} on DATABASE_URL`);
    }
    state.nodes = Array.from({ length: nodes }, (_, i) => nodeRecord(stateDir, i + 1));
    state.peers = Array.from({ length: peers }, (_, i) => peerRecord(state, i + 1));
    writeState(state);

    writeLabRegistry(paths.registry);
    for (const n of state.nodes) writeRouteObjects(paths.registry, FLEET_ASN, DEMO_MNT, n.ipv4_prefix, n.ipv6_prefix);
    const peerKeys = new Map<string, string>();
    for (const p of state.peers) peerKeys.set(p.name, await addPeerNetwork(paths.registry, p.index, p.dir));
    wireguardGoLink(stateDir);

    await ensureBuilds(say);
    say(`servers on 127.0.0.1:${state.ports.control} (control), :${state.ports.identity} (identity), :${state.ports.registry} (registry)`);
    const servers = startServers(state);
    const network = (async () => {
      await makeInternet(state);
      for (const n of state.nodes) {
        await addNamespace(state, n.ns);
        await attach(n.ns, n.public_ip);
        await enableForwarding(n.ns);
      }
      for (const p of state.peers) {
        await addNamespace(state, p.ns);
        await attach(p.ns, p.public_ip);
        await enableForwarding(p.ns);
      }
    })();
    await Promise.all([servers, network]);
    const admin = client(`${controlUrl(state)}/control/v1`, state.admin_token!);

    say(`fleet: ${nodes} nodes of AS${FLEET_ASN}, a full mesh of internal links`);
    for (const n of state.nodes) await createNode(admin, n);
    for (const a of state.nodes) for (const b of state.nodes) if (a !== b) await createInternalLink(admin, a, b);
    for (const n of state.nodes) await openForAutopeering(admin, n);

    await startRootRelay(state);
    const agentsStarted = Date.now();
    for (const n of state.nodes) {
      mkdirSync(wgDirOf(n), { recursive: true });
      await startNodeBird(state, n);
      await startNodeRelay(state, n);
      writeAgentConfig(state, n, await enrollmentToken(admin, n));
      startAgent(state, n);
    }
    writeState(state);
    say(`agents started (WireGuard: ${wireguard}); waiting for them to enroll`);
    await waitFor('every agent enrolled and its WireGuard key registered', 120_000, async () => {
      for (const n of state.nodes) {
        const entry = state.processes.find((p) => p.name === `agent-${n.node_id}`)!;
        if (!alive(entry.pid)) throw new LabError(`the agent of ${n.node_id} exited (see ${entry.log})`);
        const node = expectStatus(await admin.get(`/admin/nodes/${n.node_id}`), `node ${n.node_id}`, 200);
        if (!node.wireguard_public_key) return undefined;
      }
      return true;
    });

    for (const p of state.peers) {
      say(`peer ${p.name} (AS${p.asn}): portal login with its SSH key, a peering with ${p.node_id}`);
      mkdirSync(wgDirOf(p), { recursive: true });
      const keys = await preparePeer(p);
      const { token, request } = await requestPeering(state, p, peerKeys.get(p.name)!, keys.publicKey);
      p.request_id = request.id;
      peerTokens.set(`${stateDir}:${p.name}`, token);
      await applyPeerConfig(state, p, request, keys.privateKey);
      writeState(state);
    }

    say('waiting for every BGP session and every route');
    await waitConvergedOf(state, (options.convergeTimeoutS ?? 240) * 1000, say);
    state.converged_s = Math.round((Date.now() - agentsStarted) / 100) / 10;
    await freshHealth(admin, state, say);
    state.phase = 'up';
    writeState(state);
    return handleOf(state);
  } catch (err) {
    state.phase = 'failed';
    writeState(state);
    if (!options.keepOnFailure) await stopLab(stateDir).catch(() => {});
    throw err;
  }
}

/**
 * The agents' last runtime snapshots were taken before the sessions came up
 * (they snapshot after each apply, then every 60 s): ask each for one now, so
 * the console and the portal show the converged network when `up` returns.
 */
async function freshHealth(admin: Client, state: LabState, say: (line: string) => void): Promise<void> {
  for (const n of state.nodes) await admin.post(`/admin/nodes/${n.node_id}/notify`, { event: 'snapshot_request', reason: `${LAB_MARK} converged` });
  try {
    await waitFor('every node reported health ok', 30_000, async () => {
      for (const n of state.nodes) if ((await admin.get(`/admin/nodes/${n.node_id}/health`)).body?.health !== 'ok') return undefined;
      return true;
    });
  } catch (err) {
    say(`note: ${(err as Error).message}`);
  }
}

/** Portal session tokens of the peers of labs in this process (the handle's `portal()`), by state dir and peer name. */
const peerTokens = new Map<string, string>();

function peerRecord(state: LabState, j: number): LabPeerRecord {
  const id = peerIdentity(j);
  const dir = labPaths(state.state_dir).peer(`p${j}`);
  const node = state.nodes[(j - 1) % state.nodes.length];
  return {
    name: `p${j}`,
    ns: `${LAB_MARK}-p${j}`,
    index: j,
    public_ip: peerPublicIp(j),
    asn: id.asn,
    mntner: id.mntner,
    node_id: node.node_id,
    ipv4_prefix: id.ipv4_prefix,
    ipv6_prefix: id.ipv6_prefix,
    dir,
    bird_socket: join(dir, 'bird.ctl'),
    interface: null,
    request_id: null,
    protocols: [],
    post_up: [],
  };
}

async function chooseWireguard(choice: WireguardChoice): Promise<WireguardKind> {
  const kernel = await kernelWireguard();
  if (choice === 'kernel' && !kernel)
    throw new LabError('--wireguard kernel: this kernel has no WireGuard module (ip link add type wireguard fails); use --wireguard userspace');
  if (choice === 'kernel' || (choice === 'auto' && kernel)) return 'kernel';
  if (!existsSync('/usr/bin/wireguard-go')) throw new LabError('userspace WireGuard needs /usr/bin/wireguard-go (apt-get install wireguard-go)');
  return 'userspace';
}

async function waitConvergedOf(state: LabState, timeoutMs: number, say: (line: string) => void = () => {}): Promise<number> {
  const started = Date.now();
  let last: Convergence | undefined;
  let lastSaid = 0;
  for (;;) {
    last = await convergence(state);
    if (last.missing.length === 0) return (Date.now() - started) / 1000;
    for (const p of state.processes) if (!alive(p.pid)) throw new LabError(`${p.name} exited (see ${p.log})`);
    if (Date.now() - lastSaid > 15_000) {
      lastSaid = Date.now();
      say(`  ${last.sessions_established}/${last.sessions_total} sessions Established, routes ${last.routes_ok ? 'complete' : 'incomplete'}`);
    }
    if (Date.now() - started > timeoutMs)
      throw new LabError(`the lab did not converge within ${Math.round(timeoutMs / 1000)} s:\n  ${last.missing.slice(0, 30).join('\n  ')}`);
    await sleep(1_000);
  }
}

function handleOf(state: LabState): LabHandle {
  const urls = urlsOf(state);
  const admin = client(`${urls.control}/control/v1`, state.admin_token!);
  const nodeOf = (id: string) => {
    const n = state.nodes.find((x) => x.node_id === id);
    if (!n) throw new LabError(`no node ${id} in the lab`);
    return n;
  };
  const handle: LabHandle = {
    stateDir: state.state_dir,
    wireguard: state.wireguard,
    controlUrl: urls.control,
    identityUrl: identityUrl(state),
    consoleUrl: urls.console,
    portalUrl: urls.portal,
    adminToken: state.admin_token!,
    admin,
    nodes: state.nodes.map(publicNode),
    peers: state.peers.map((p) => ({
      name: p.name,
      ns: p.ns,
      asn: p.asn,
      nodeId: p.node_id,
      ipv4Prefix: p.ipv4_prefix,
      ipv6Prefix: p.ipv6_prefix,
      interface: p.interface!,
      protocols: p.protocols,
      requestId: p.request_id!,
      birdSocket: p.bird_socket,
    })),
    convergeS: state.converged_s ?? 0,
    exec(where, argv, timeoutMs = 30_000) {
      const { ns, dir } = NAME_OF(state, where);
      return attempt(inNamespace(ns, join(dir, 'run-wireguard'), argv), timeoutMs);
    },
    birdc: (where, ...args) => run(['birdc', '-s', NAME_OF(state, where).socket, ...args]),
    async wg(where, ...args) {
      const { ns, dir } = NAME_OF(state, where);
      return run(inNamespace(ns, join(dir, 'run-wireguard'), ['wg', ...args]));
    },
    convergence: () => convergence(state),
    waitConverged: (timeoutMs = 240_000) => waitConvergedOf(state, timeoutMs),
    status: () => labStatus(state.state_dir),
    portal(peer) {
      const token = peerTokens.get(`${state.state_dir}:${peer}`);
      if (!token) throw new LabError(`no portal session of peer ${peer} in this process`);
      return client(`${urls.control}/control/v1`, token);
    },
    stopControl: () => stopServers(state),
    async startControl() {
      await startServers(state);
    },
    agentPid(nodeId) {
      const entry = state.processes.find((p) => p.name === `agent-${nodeOf(nodeId).node_id}`);
      return entry && alive(entry.pid) ? entry.pid : null;
    },
    killAgent: (nodeId, signal = 'SIGKILL') => stopAgent(state, nodeOf(nodeId), signal),
    async startAgent(nodeId) {
      startAgent(state, nodeOf(nodeId));
    },
    async wireguardGoPids(where) {
      const { ns } = NAME_OF(state, where);
      const found: Record<string, number> = {};
      for (const p of markedProcesses(join(state.state_dir, 'bin', 'wireguard-go'))) {
        const words = p.cmdline.split(' ');
        if (!words[0].endsWith('/wireguard-go')) continue;
        const identified = (await attempt(['ip', 'netns', 'identify', String(p.pid)])).stdout.trim();
        if (identified === ns) found[words[words.length - 1]] = p.pid;
      }
      return found;
    },
    async setPeerTunnel(peer, up) {
      const p = state.peers.find((x) => x.name === peer);
      if (!p?.interface) throw new LabError(`no peer ${peer} with a tunnel in the lab`);
      await run(['ip', '-n', p.ns, 'link', 'set', 'dev', p.interface, up ? 'up' : 'down']);
      if (up) await runPostUp(p, true);
    },
    down: () => stopLab(state.state_dir).then(() => undefined),
  };
  return handle;
}

const publicNode = (n: LabNodeRecord): LabNode => ({
  id: n.node_id,
  ns: n.ns,
  index: n.index,
  publicIp: n.public_ip,
  asn: n.asn,
  loopbackIpv4: n.loopback_ipv4,
  loopbackIpv6: n.loopback_ipv6,
  ipv4Prefix: n.ipv4_prefix,
  ipv6Prefix: n.ipv6_prefix,
  birdSocket: n.bird_socket,
  agentStateDir: join(n.dir, 'agent'),
});

/** The handle of the lab running in `stateDir` (made by another process, e.g. `npm run lab -- up`); its peers' portal sessions are not known here. */
export function attachLab(stateDir = DEFAULT_STATE_DIR): LabHandle {
  const state = readState(stateDir);
  if (!state) throw new LabError(`no lab in ${stateDir}`);
  return handleOf(state);
}

/** The status of the lab in `stateDir`, from its routers (the JSON `status` prints). */
export async function labStatus(stateDir = DEFAULT_STATE_DIR): Promise<LabStatus> {
  const state = readState(resolve(stateDir));
  const down: LabStatus = {
    lab: 'down',
    nodes: 0,
    peers: 0,
    sessions_total: 0,
    sessions_established: 0,
    routes_ok: false,
    converge_s: null,
    wireguard: null,
    control_url: null,
    console_url: null,
    portal_url: null,
  };
  if (!state) return down;
  const urls = urlsOf(state);
  const dead = state.processes.filter((p) => !alive(p.pid)).map((p) => `${p.name} (pid ${p.pid}) is not running`);
  if (dead.length === state.processes.length && state.processes.length > 0)
    return { ...down, problems: ['every process of the lab has ended: run npm run lab -- down'] };
  const seen = await convergence(state);
  const problems = [...dead, ...seen.missing];
  return {
    lab: state.phase === 'starting' ? 'starting' : problems.length === 0 ? 'up' : 'degraded',
    nodes: state.nodes.length,
    peers: state.peers.length,
    sessions_total: seen.sessions_total,
    sessions_established: seen.sessions_established,
    routes_ok: seen.routes_ok,
    converge_s: state.converged_s,
    wireguard: state.wireguard,
    control_url: urls.control,
    console_url: urls.console,
    portal_url: urls.portal,
    ...(problems.length ? { problems } : {}),
  };
}

/** Programs the lab starts; the sweep stops a marked process only when it is one of these (never an editor or a `tail` of a lab log). */
const LAB_PROGRAMS = ['node', 'bird', 'wireguard-go', 'ip', 'sh', 'postgres'];

/**
 * Removes the lab in `stateDir`: its processes (by pid from lab.json, then any
 * process of the lab's programs whose command line still carries `dn42lab`),
 * every `dn42lab-*` namespace (with the links and devices in it), its database
 * when it made one on DATABASE_URL, and its state dir but the logs. Tolerates
 * a lab that is partly or wholly gone. Answers what it removed.
 */
export async function stopLab(stateDir = DEFAULT_STATE_DIR): Promise<string[]> {
  const dir = resolve(stateDir);
  const state = readState(dir);
  const removed: string[] = [];
  const order = ['agent-', 'wg-', 'bird-', 'relay-', SERVER_PROCESS];
  const rank = (name: string) => order.findIndex((prefix) => name.startsWith(prefix));
  for (const p of [...(state?.processes ?? [])].sort((a, b) => rank(a.name) - rank(b.name))) {
    if (!alive(p.pid)) continue;
    await stopProcess(p.pid, p.name === SERVER_PROCESS ? 30_000 : 5_000);
    removed.push(`process ${p.name} (${p.pid})`);
  }
  for (const p of markedProcesses(LAB_MARK)) {
    const program = (p.cmdline.split(' ')[0] ?? '').split('/').pop() ?? '';
    if (!LAB_PROGRAMS.includes(program) && !program.startsWith(LAB_MARK)) continue;
    if (cmdlineOf(p.pid) === null) continue;
    await stopProcess(p.pid, 5_000);
    removed.push(`process ${p.pid} (${p.cmdline.slice(0, 80)})`);
  }
  for (const ns of new Set([...(state?.namespaces ?? []), ...(await listLabNamespaces())])) {
    await removeNamespace(ns);
    removed.push(`namespace ${ns}`);
  }
  if (state?.database.kind === 'external') {
    await dropExternalDatabase(state.database);
    removed.push(`database ${state.database.name}`);
  }
  if (existsSync(dir)) {
    for (const entry of readdirSync(dir)) if (entry !== 'logs') rmSync(join(dir, entry), { recursive: true, force: true });
    removed.push(`state dir ${dir} (logs kept)`);
  }
  return removed;
}
