import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { evaluateFlapAlerts } from '../../commands/flap-alerts.js';
import { createControlApp } from '../../http/control/app.js';
import type { RuntimeSnapshot } from '../../domain/telemetry/reports.js';
import { recordHeartbeat } from '../../infra/telemetry/liveness.js';
import { addSnapshotToSeries } from '../../infra/telemetry/series.js';
import { issueAgentToken } from '../support/agents.js';
import { api, type ApiResponse } from '../support/http.js';
import { startBaseRegistryReplica } from '../support/registry-replica.js';
import { createTestSystem, startApp, type TestClock, type TestSystem } from '../support/system.js';
import { addAccount, loginAs } from '../http/control/support.js';
import { buildWeb } from '../../web/build.js';
import { WEB_BUILD_DIR } from '../../web/files.js';

/**
 * The console's browser fixture (issue 22): a real control server on a fresh
 * database, seeded through the real HTTP endpoints with a fleet that reads well
 * now (telemetry ending at the server's now, which is the wall clock once seeded),
 * plus page helpers that fail a test on console errors, failed requests and
 * third-party requests.
 */

export const CONSOLE_ADMIN_TOKEN = 'console-spec-admin-token-0123456789';
const CAPTCHA_SECRET = 'console-spec-captcha-secret-0123456789';
const SERVICE_TOKEN = 'console-spec-registry-service-token-0123456789';
/** The app keeps its session token under this sessionStorage key. */
export const TOKEN_KEY = 'dn42.console.token';
export const SCREENSHOTS = '.data/screenshots';

/** The fleet's own AS (ALPHA-AS in the base test registry). */
export const FLEET_ASN = 4242420001;
/** Peer ASes: BETA-AS and GAMMA (named in the base registry), two unnamed ones. */
export const PEER_ASNS = { beta: 4242420002, gamma: 4242420003, delta: 4242420011, epsilon: 4242420012 } as const;

const MIN = 60_000;
const HOUR = 60 * MIN;
const KEY = (n: number) => `${String.fromCharCode(97 + n)}QzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=`;

type PeerName = keyof typeof PEER_ASNS;
interface NodeSeed {
  id: string;
  site: string;
  /** Base traffic rate of the node (bytes/s on rx; tx is 1.6 times it). */
  rate: number;
  /** External peerings: interface dn42_<peer>, sessions dn42_<peer>_v6 and dn42_<peer>_v4. */
  peers: PeerName[];
  reports: boolean;
}

/** Four reporting nodes in four cities and one that never reported (offline, Singapore). */
const SEED: readonly NodeSeed[] = [
  { id: 'core-ams-1', site: 'ams1', rate: 900_000, peers: ['beta', 'gamma'], reports: true },
  { id: 'edge-fra-1', site: 'fra1', rate: 600_000, peers: ['beta', 'delta'], reports: true },
  { id: 'edge-lon-1', site: 'lon1', rate: 400_000, peers: ['gamma'], reports: true },
  { id: 'edge-nyc-1', site: 'nyc1', rate: 250_000, peers: ['epsilon'], reports: true },
  { id: 'edge-sin-1', site: 'sin1', rate: 0, peers: [], reports: false },
];

/** Internal WireGuard links (from, to): provisioned on `from` as internal peerings. */
const LINKS = [
  ['core-ams-1', 'edge-fra-1'],
  ['core-ams-1', 'edge-lon-1'],
  ['edge-lon-1', 'edge-nyc-1'],
  ['edge-fra-1', 'edge-sin-1'],
] as const;

export interface ConsoleNodeIds {
  /** core-ams-1: two peerings (BETA-AS, GAMMA), three generations, DNS group member, autopeering open. */
  core: string;
  /** edge-fra-1: its BETA-AS IPv4 session flaps (a session alert), it reports the flapping prefix. */
  flapping: string;
  /** edge-lon-1: reports drift. */
  drift: string;
  /** edge-nyc-1: its session to AS4242420012 is down (a peering issue). */
  sessionDown: string;
  /** edge-sin-1: provisioned, never reported (offline). */
  offline: string;
  /** Every node id, by id. */
  all: string[];
}

/** A control server process on the fixture's database. */
export interface ControlInstance {
  /** Origin, e.g. http://127.0.0.1:41234; the APIs are under `${url}/control/v1`. */
  url: string;
  sys: TestSystem;
  close(): Promise<void>;
}

export type Client = ReturnType<typeof api>;

export interface ConsoleFleet {
  /** Control origin (no trailing slash); APIs under `${url}/control/v1`, the console at `${url}/console/`. */
  url: string;
  /** `${url}/control/v1`. */
  api: string;
  /** The static admin token (ADMIN_TOKEN). */
  adminToken: string;
  /** An API client on `api` with the admin token (`admin.get('/ui/nodes')`), for set-up and checks behind the pages. */
  admin: Client;
  /** Logs the operator account in over HTTP (solving the proof-of-work captcha) and answers its session token. */
  accountToken(): Promise<string>;
  /** An operator account; login needs the proof-of-work captcha (`CONTROL_LOGIN_CAPTCHA=pow`, GET /control/v1/auth/captcha). */
  account: { username: string; password: string };
  nodes: ConsoleNodeIds;
  /** The fleet's AS and the peers' ASes. */
  fleetAsn: number;
  peerAsns: typeof PEER_ASNS;
  /** Generation numbers of `nodes.core`, oldest first (rollback to `generations[0]` changes something). */
  generations: number[];
  /** Pending agent registrations: one to approve, one to reject (requested node ids `edge-par-1`, `edge-waw-1`). */
  registrations: { approve: string; reject: string };
  /** The enrollment token issued (its secret was used by the two registrations). */
  enrollmentTokenId: string;
  /** A prefix the fleet sees flapping (an open prefix alert); not blocked yet. */
  prefixToBlock: string;
  /** A peer AS with sessions on core-ams-1 and edge-lon-1 (GAMMA), not disabled yet. */
  peerAsnToDisable: number;
  /** The flapping session: node, session name, peer AS. */
  flappingSession: { nodeId: string; name: string; peerAsn: number };
  /** DNS group, zone and record ids. */
  dns: { groupId: number; zoneId: number; zone: string; recordIds: number[] };
  /** Agent releases uploaded; `target` is the global target (the nodes run `current`). */
  releases: { current: string; target: string };
  /** The registry replica's URL (names for ASNs 4242420001..3), or null. */
  registryUrl: string;
  /** The instant the seeded telemetry ends at (the server's now when seeding finished). */
  seededAt: Date;
  sys: TestSystem;
  /** A second control server (its own process state, own clock at wall time) on the same database. */
  startSecondInstance(): Promise<ControlInstance>;
  close(): Promise<void>;
}

/**
 * Makes a test clock read the wall clock shifted by an offset; setting `current`
 * moves the offset (so the supports' `clock.current = …` and `advance` still work).
 * Answers a function that puts the clock back on wall time.
 */
export function liveClock(clock: TestClock): () => void {
  let offset = 0;
  Object.defineProperty(clock, 'current', {
    configurable: true,
    get: () => new Date(Date.now() + offset),
    set: (d: Date) => {
      offset = d.getTime() - Date.now();
    },
  });
  return () => {
    offset = 0;
  };
}

function controlEnv(registryUrl: string): Record<string, string> {
  return {
    ADMIN_TOKEN: CONSOLE_ADMIN_TOKEN,
    CONTROL_LOGIN_CAPTCHA: 'pow',
    CAPTCHA_SECRET,
    REGISTRY_URL: registryUrl,
    REGISTRY_SERVICE_TOKEN: SERVICE_TOKEN,
  };
}

const ok = (res: ApiResponse, status: number, what: string): ApiResponse => {
  expect(res.status, `${what}: ${res.text.slice(0, 300)}`).to.equal(status);
  return res;
};

/** Traffic rate of a node at `t`: a day curve (peak 20:00 UTC), the previous day a bit lower, a little deterministic ripple. */
function rateAt(base: number, t: number, seededAt: number): number {
  const hours = t / HOUR;
  const day = 1 + 0.45 * Math.sin(((hours - 14) / 24) * 2 * Math.PI);
  const ripple = 1 + 0.08 * Math.sin(hours * 7.3) + 0.04 * Math.cos(hours * 17.1);
  const yesterday = t < seededAt - 24 * HOUR ? 0.82 : 1;
  return base * day * ripple * yesterday;
}

interface Session {
  name: string;
  asn: number;
  state: string;
  since: string;
}

/**
 * Starts the registry replica and the control server, and seeds the fleet
 * through the HTTP endpoints (admin and agent) with the clock moved over the
 * last 48 hours; when it answers, the server's clock is the wall clock. With
 * `agents` (the default) the reporting nodes go on heartbeating and sending a
 * runtime snapshot every `reportEveryMs` (AGENT_REPORT_MS), and the flap-alert job runs as often,
 * until `close`; `agents: false` keeps the data as seeded (nodes turn stale
 * after 5 minutes).
 */
export async function startConsoleFleet(options: { agents?: boolean; reportEveryMs?: number } = {}): Promise<ConsoleFleet> {
  const replica = await startBaseRegistryReplica(SERVICE_TOKEN);
  const env = controlEnv(replica.url);
  const sys = await createTestSystem({ env });
  const toWallTime = liveClock(sys.clock);
  const started = await startApp(createControlApp(sys.context));
  const agentsLoop: { timer?: NodeJS.Timeout; running?: Promise<void>; stopped?: boolean } = {};
  const instances: ControlInstance[] = [];
  const close = async () => {
    agentsLoop.stopped = true;
    clearTimeout(agentsLoop.timer);
    await agentsLoop.running;
    for (const i of instances.splice(0)) await i.close();
    await started.close();
    await sys.close();
    await replica.close();
  };
  try {
    const seeded = await seed(sys, started.url);
    const seededAt = new Date(seeded.end);
    toWallTime();
    // The agents: a heartbeat (what the socket records) and a runtime snapshot every 30 s, and the flap-alert
    // job's evaluation, as a running server and its fleet do; so the nodes stay online and healthy, and the
    // traffic goes on, while the pages are walked.
    const tick = async (snapshots: boolean) => {
      const now = sys.clock.now();
      await Promise.all(
        SEED.filter((n) => n.reports).map((n) =>
          recordHeartbeat(
            sys.pool,
            n.id,
            { agent_version: seeded.releases.current, applied_generation: seeded.latestGeneration[n.id], apply_status: 'succeeded' },
            now,
          ),
        ),
      );
      if (snapshots) await seeded.report(now.getTime());
      await evaluateFlapAlerts(sys.context, now);
    };
    await tick(false);
    const schedule = () => {
      if (agentsLoop.stopped || options.agents === false) return;
      agentsLoop.timer = setTimeout(() => {
        agentsLoop.running = tick(true)
          .catch((err) => {
            if (!agentsLoop.stopped) console.warn(`console fixture: the agents' report failed: ${err}`);
          })
          .finally(schedule);
      }, options.reportEveryMs ?? AGENT_REPORT_MS);
      agentsLoop.timer.unref();
    };
    schedule();
    const alerts = (await api(`${started.url}/control/v1`, { token: CONSOLE_ADMIN_TOKEN }).get('/ui/fleet/flap-alerts?active=1')).body.alerts;
    expect(alerts, 'open flap alerts after seeding').to.have.length.at.least(2);
    await sys.context.background.drain();
    return {
      url: started.url,
      api: `${started.url}/control/v1`,
      adminToken: CONSOLE_ADMIN_TOKEN,
      admin: api(`${started.url}/control/v1`, { token: CONSOLE_ADMIN_TOKEN }),
      accountToken: async () => {
        const res = await loginAs(api(started.url), seeded.account.username, seeded.account.password);
        expect(res.status, `login: ${res.text}`).to.equal(200);
        return res.body.token as string;
      },
      account: seeded.account,
      nodes: {
        core: 'core-ams-1',
        flapping: 'edge-fra-1',
        drift: 'edge-lon-1',
        sessionDown: 'edge-nyc-1',
        offline: 'edge-sin-1',
        all: SEED.map((n) => n.id),
      },
      fleetAsn: FLEET_ASN,
      peerAsns: PEER_ASNS,
      generations: seeded.generations,
      registrations: seeded.registrations,
      enrollmentTokenId: seeded.enrollmentTokenId,
      prefixToBlock: FLAPPING_PREFIX,
      peerAsnToDisable: PEER_ASNS.gamma,
      flappingSession: { nodeId: 'edge-fra-1', name: 'dn42_beta_v4', peerAsn: PEER_ASNS.beta },
      dns: seeded.dns,
      releases: seeded.releases,
      registryUrl: replica.url,
      seededAt,
      sys,
      startSecondInstance: async () => {
        const second = await createTestSystem({ env, database: sys.db });
        liveClock(second.clock);
        const app = await startApp(createControlApp(second.context));
        const instance: ControlInstance = {
          url: app.url,
          sys: second,
          close: async () => {
            const at = instances.indexOf(instance);
            if (at >= 0) instances.splice(at, 1);
            await app.close();
            await second.close();
          },
        };
        instances.push(instance);
        return instance;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

const FLAPPING_PREFIX = '172.21.0.0/24';
/** Hours of telemetry posted through the agent endpoint (the rest of the 48 hours goes into the rollups directly). */
const LIVE_HOURS = 1;
/** How often the fixture's agents report after the seed (heartbeat, snapshot) and the alert job runs. */
export const AGENT_REPORT_MS = 30_000;

async function seed(sys: TestSystem, url: string) {
  const admin = api(`${url}/control/v1`, { token: CONSOLE_ADMIN_TOKEN });
  let lap = Date.now();
  const mark = (what: string) => {
    if (process.env.CONSOLE_FIXTURE_TIMING) console.log(`      ${what}: ${Date.now() - lap} ms`);
    lap = Date.now();
  };
  const end = Math.floor(Date.now() / MIN) * MIN;
  const start = end - 48 * HOUR;
  const iso = (t: number) => new Date(t).toISOString();
  const at = (t: number) => (sys.clock.current = new Date(t));

  // Nodes, created two days ago.
  at(start - 2 * HOUR);
  for (const [i, n] of SEED.entries()) {
    ok(
      await admin.post('/admin/nodes', {
        node_id: n.id,
        asn: FLEET_ASN,
        router_id: `172.20.9.${i + 1}`,
        site: n.site,
        loopback_ipv4: `172.20.9.${i + 1}`,
        loopback_ipv6: `fd42:4242:9::${i + 1}`,
        link_local: `fe80::9:${i + 1}`,
        ipv4_prefixes: [`172.20.9.${i * 16}/28`],
        ipv6_prefixes: [`fd42:4242:9:${i}::/64`],
        inventory: { hostname: `${n.id}.nodes.example.net`, os: 'debian-12', arch: 'x86_64', capabilities: ['bird', 'wireguard'] },
      }),
      201,
      `node ${n.id}`,
    );
  }
  mark('nodes');
  // Internal links, then the external peerings (each provision is a generation of its node).
  for (const [i, [from, to]] of LINKS.entries()) {
    at(start - 2 * HOUR + (i + 1) * MIN);
    const name = `int_${to.split('-')[1]}`;
    const port = 52801 + i;
    ok(
      await admin.post(`/admin/nodes/${from}/peerings/provision`, {
        peering: { name, remote_asn: FLEET_ASN, remote_node_id: to, is_internal: true },
        interface_spec: {
          name,
          listen_port: port,
          addresses: [`10.99.9.${2 * i}/31`, 'fe80::99/64'],
          cost: 10 + i,
          peer: { endpoint: `${to}.nodes.example.net:${port}` },
        },
      }),
      201,
      `link ${from} -> ${to}`,
    );
  }
  const sessionsOf: Record<string, Session[]> = {};
  for (const [i, n] of SEED.entries()) {
    sessionsOf[n.id] = [];
    for (const [j, peer] of n.peers.entries()) {
      at(start - HOUR + (i * 4 + j) * MIN);
      const asn = PEER_ASNS[peer];
      const iface = `dn42_${peer}`;
      const port = 51801 + j;
      ok(
        await admin.post(`/admin/nodes/${n.id}/peerings/provision`, {
          peering: { name: `${peer}-as`, remote_asn: asn },
          interface_spec: {
            name: iface,
            kind: 'wireguard',
            listen_port: port,
            mtu: 1420,
            peer: { public_key: KEY(j + 10), endpoint: `${peer}.peer.example.net:${20000 + (asn % 10000)}` },
            peer_link_local: `fe80::${asn % 10000}`,
          },
          bgp_specs: [
            { name: `${iface}_v6`, remote_asn: asn, neighbor_address: `fe80::${asn % 10000}`, interface: iface },
            { name: `${iface}_v4`, remote_asn: asn, neighbor_address: `172.23.${asn % 100}.1`, interface: null },
          ],
        }),
        201,
        `peering ${n.id} ${peer}`,
      );
      for (const v of ['v6', 'v4']) sessionsOf[n.id].push({ name: `${iface}_${v}`, asn, state: 'established', since: iso(start - 30 * MIN) });
    }
  }
  mark('peerings');
  // DNS: a group with a zone and records, the core and fra as members.
  const group = ok(await admin.post('/admin/dns-groups', { name: 'anycast-dns', bind_addresses: ['172.20.9.53', 'fd42:4242:9::53'] }), 201, 'dns group');
  const groupId = group.body.id as number;
  const zone = ok(await admin.post(`/admin/dns-groups/${groupId}/zones`, { zone: 'alpha.dn42' }), 201, 'zone');
  const zoneId = zone.body.zone.id as number;
  const recordIds: number[] = [];
  for (const r of [
    { name: '@', type: 'A', content: '172.20.9.1' },
    { name: '@', type: 'AAAA', content: 'fd42:4242:9::1' },
    { name: 'www', type: 'CNAME', content: 'alpha.dn42.' },
    { name: 'ns1', type: 'A', content: '172.20.9.53' },
  ]) {
    recordIds.push(ok(await admin.post(`/admin/dns-groups/${groupId}/zones/${zoneId}/records`, r), 201, `record ${r.name}`).body.record.id);
  }
  for (const id of ['core-ams-1', 'edge-fra-1']) ok(await admin.put(`/admin/nodes/${id}/dns-group`, { dns_group_id: groupId }), 200, `dns member ${id}`);

  // Autopeering: the core accepts requests.
  ok(
    await admin.put('/admin/autopeering/nodes/core-ams-1', { enabled: true, endpoint_host: 'core-ams-1.nodes.example.net', max_sessions: 20 }),
    200,
    'autopeering policy',
  );

  mark('dns, autopeering');
  // Agents: a token, a WireGuard key each.
  const agents: Record<string, ReturnType<typeof api>> = {};
  for (const [i, n] of SEED.entries()) {
    if (!n.reports) continue;
    const { token } = await issueAgentToken(url, CONSOLE_ADMIN_TOKEN, n.id);
    agents[n.id] = api(`${url}/control/v1`, { token });
    ok(await agents[n.id].post('/agent/wireguard-keys', { node_id: n.id, public_key: KEY(i) }), 200, `key of ${n.id}`);
  }

  // Generations as the agents will apply them (a node's WireGuard key re-materialises its neighbours).
  const latestGeneration: Record<string, number> = {};
  for (const n of SEED) {
    const res = ok(await admin.get(`/admin/nodes/${n.id}/generations`), 200, `generations of ${n.id}`);
    const gens = (res.body.generations as { generation: number }[]).map((g) => g.generation);
    latestGeneration[n.id] = gens.length ? Math.max(...gens) : 0;
  }
  const generations = (ok(await admin.get('/admin/nodes/core-ams-1/generations'), 200, 'generations').body.generations as { generation: number }[])
    .map((g) => g.generation)
    .sort((a, b) => a - b);

  // Telemetry: a snapshot every 10 minutes for 48 hours (the traffic chart and its previous window).
  const interfacesOf = (n: NodeSeed) => [...n.peers.map((p) => `dn42_${p}`), ...LINKS.filter(([f]) => f === n.id).map(([, to]) => `int_${to.split('-')[1]}`)];
  const counters: Record<string, Record<string, [number, number]>> = {};
  const snapshotOf = (n: NodeSeed, t: number, sessions: Session[], cpu: number) => {
    const names = interfacesOf(n);
    return {
      node_id: n.id,
      generation: latestGeneration[n.id],
      captured_at: iso(t),
      containers: [
        { name: 'bird', state: 'running', image: 'bird:2.15' },
        { name: 'wireguard', state: 'running' },
      ],
      interfaces: [
        ...names.map((name) => ({ name, up: true, mtu: 1420, rx_bytes: Math.round(counters[n.id][name][0]), tx_bytes: Math.round(counters[n.id][name][1]) })),
        { name: 'eth0', up: true, mtu: 1500, rx_bytes: 9e11, tx_bytes: 9e11 },
      ],
      wireguard_interfaces: names.map((name, k) => ({
        name,
        public_key: KEY(k),
        listen_port: 51801 + k,
        peers: [
          {
            public_key: KEY(k + 10),
            endpoint: `${name}.peer.example.net:51820`,
            latest_handshake_at: iso(t - 45_000),
            rx_bytes: Math.round(counters[n.id][name][0]),
            tx_bytes: Math.round(counters[n.id][name][1]),
          },
        ],
      })),
      bgp_protocols: sessions.map((s) => ({
        name: s.name,
        state: s.state,
        since: s.since,
        remote_asn: s.asn,
        routes_imported: s.state === 'established' ? 120 : 0,
        routes_exported: s.state === 'established' ? 14 : 0,
      })),
      self_metrics: {
        cpu,
        rss: 48_000_000 + (Math.round(cpu * 1000) % 7) * 1_000_000,
        total_failures: 0,
        log_warning_count: 1,
        log_error_count: 0,
        last_error_at: null,
        last_error_message: null,
      },
    };
  };
  const reporting = SEED.filter((n) => n.reports);
  for (const n of reporting) counters[n.id] = Object.fromEntries(interfacesOf(n).map((name) => [name, [1e9, 2e9]]));
  const advance = (n: NodeSeed, from: number, to: number) => {
    const names = interfacesOf(n);
    const seconds = (to - from) / 1000;
    const rate = rateAt(n.rate, to, end);
    names.forEach((name, k) => {
      const share = (names.length - k) / ((names.length * (names.length + 1)) / 2);
      counters[n.id][name][0] += rate * share * seconds;
      counters[n.id][name][1] += rate * share * seconds * 1.6;
    });
  };
  mark('agents, generations');
  // History older than LIVE_HOURS goes straight into the series rollups, written by the same function the
  // snapshot endpoint runs after answering (one transaction per snapshot, no status rows): 48 hours of
  // snapshots through HTTP cost tens of seconds. The rest goes through the agent endpoints in time order
  // (the server's clock set to each sample's time, so nothing is placed "ahead" of it).
  const STEP = 10 * MIN;
  const live = end - LIVE_HOURS * HOUR;
  const cpuAt = (n: NodeSeed, t: number) => Math.round((2 + 1.5 * Math.sin(t / HOUR) + (n.rate / 1e6) * 3) * 100) / 100;
  const previousAt: Record<string, number> = {};
  const step = (n: NodeSeed, t: number) => {
    if (previousAt[n.id] !== undefined) advance(n, previousAt[n.id], t);
    previousAt[n.id] = t;
  };
  await Promise.all(
    reporting.map(async (n) => {
      for (let t = start; t < live; t += STEP) {
        step(n, t);
        await addSnapshotToSeries(sys.pool, snapshotOf(n, t, sessionsOf[n.id], cpuAt(n, t)) as unknown as RuntimeSnapshot, new Date(t));
      }
    }),
  );
  mark('history (rollups)');
  // edge-nyc-1's session to epsilon goes down 40 minutes ago; edge-fra-1's beta v4 flaps four times in the last 9 minutes.
  const nycDown = end - 40 * MIN;
  const sessionsAt = (n: NodeSeed, t: number): Session[] =>
    sessionsOf[n.id].map((s) => {
      if (n.id === 'edge-nyc-1' && s.name === 'dn42_epsilon_v4' && t >= nycDown) return { ...s, state: 'idle', since: iso(nycDown) };
      if (n.id === 'edge-fra-1' && s.name === 'dn42_beta_v4' && t > end - 10 * MIN) {
        const m = Math.max(0, Math.round((end - t) / MIN)); // after the seed: as it ended (up since 30 s before)
        const down = m % 2 === 1 && m > 1;
        return { ...s, state: down ? 'idle' : 'established', since: iso(down ? t : t - 30_000) };
      }
      return s;
    });
  const postSnapshot = async (n: NodeSeed, t: number) => {
    step(n, t);
    ok(await agents[n.id].post('/agent/runtime-snapshot', snapshotOf(n, t, sessionsAt(n, t), cpuAt(n, t))), 200, `snapshot ${n.id}`);
  };
  const FLAP_MINUTES = 30;
  for (let t = live; t <= end - FLAP_MINUTES * MIN; t += STEP) {
    at(t);
    for (const n of reporting) await postSnapshot(n, t);
    await sys.context.background.drain();
  }
  // The last 30 minutes a minute at a time: snapshots (every 10 minutes; edge-fra-1 every minute at the end), routing
  // tables, prefix-flap reports building up, and the flap-alert job's evaluation (which samples the flap-rate series).
  const FLAPPING_V6 = 'fd42:dead:beef::/48';
  for (let m = FLAP_MINUTES - 1; m >= 0; m--) {
    const t = end - m * MIN;
    at(t);
    for (const n of reporting) if (m % 10 === 0 || (n.id === 'edge-fra-1' && m <= 9)) await postSnapshot(n, t);
    if (m === FLAP_MINUTES - 1 || m === 1) {
      for (const n of reporting) {
        const routes = routesOf(n, m === 1 ? 1 : 0);
        ok(await agents[n.id].post('/agent/routing-table', { node_id: n.id, captured_at: iso(t), rpki_observed: true, routes }), 200, `routes ${n.id}`);
      }
    }
    // The flapping prefix builds up from 25 minutes ago: edge-fra-1 strongest, core-ams-1 half, edge-lon-1 (another peer) a little.
    const build = Math.max(0, (25 - m) / 25);
    const report = (nodeId: string, entries: Record<string, unknown>[], total: number) =>
      agents[nodeId].post('/agent/prefix-flaps', { node_id: nodeId, captured_at: iso(t - 5_000), feed_state: 'established', entries, total_changes: total });
    const flap = (peer: number, score: number, flaps: number) => ({
      prefix: FLAPPING_PREFIX,
      peer_asn: peer,
      origin_asn: 4242420077,
      score: Math.round(score * 100) / 100,
      flaps,
      last_flap_at: iso(t - 20_000),
      as_path: [peer, 4242420077],
      announcements: flaps,
      withdrawals: flaps,
    });
    const fraEntries = build > 0 ? [flap(PEER_ASNS.beta, 640 * build, Math.round(24 * build) + 1)] : [];
    if (m <= 15) fraEntries.push({ ...flap(PEER_ASNS.delta, 45, 3), prefix: FLAPPING_V6, origin_asn: 4242420078, as_path: [PEER_ASNS.delta, 4242420078] });
    ok(await report('edge-fra-1', fraEntries, 40 + Math.round(60 * build)), 200, 'prefix flaps fra');
    ok(
      await report('core-ams-1', build > 0 ? [flap(PEER_ASNS.beta, 260 * build, Math.round(10 * build) + 1)] : [], 20 + Math.round(25 * build)),
      200,
      'prefix flaps ams',
    );
    ok(
      await report('edge-lon-1', build > 0 ? [{ ...flap(PEER_ASNS.gamma, 30 * build, 2), as_path: [PEER_ASNS.gamma, PEER_ASNS.beta, 4242420077] }] : [], 15),
      200,
      'prefix flaps lon',
    );
    ok(await report('edge-nyc-1', [], 8), 200, 'prefix flaps nyc');
    await sys.context.background.drain();
    await evaluateFlapAlerts(sys.context, sys.clock.now());
  }
  // Apply results of the generation each node runs, then reconciliation: in sync, but drift on edge-lon-1.
  for (const n of reporting) {
    ok(
      await agents[n.id].post('/agent/apply-result', {
        node_id: n.id,
        generation: latestGeneration[n.id],
        status: 'succeeded',
        started_at: iso(end - 20_000),
        finished_at: iso(end - 15_000),
        error: null,
      }),
      200,
      `apply result ${n.id}`,
    );
    const status = n.id === 'edge-lon-1' ? 'drift' : 'in_sync';
    ok(
      await agents[n.id].post('/agent/reconciliation-report', {
        node_id: n.id,
        generation: latestGeneration[n.id],
        captured_at: iso(end - 10_000),
        status,
        drift_items:
          status === 'drift'
            ? [
                { kind: 'wireguard', name: 'dn42_gamma', detail: 'listen port differs (51802 running, 51801 desired)' },
                { kind: 'bird', name: 'dn42_gamma_v4', detail: null },
              ]
            : [],
      }),
      200,
      `reconciliation ${n.id}`,
    );
  }

  mark('live telemetry, flaps, alerts');
  // Enrollment token and two pending registrations.
  const enrollment = ok(await admin.post('/admin/enrollment-tokens', { description: 'new edge nodes, winter 2026' }), 201, 'enrollment token');
  const anonymous = api(`${url}/control/v1`);
  for (const [i, requested] of ['edge-par-1', 'edge-waw-1'].entries()) {
    ok(
      await anonymous.post(
        '/agent/register',
        {
          enrollment_token: enrollment.body.secret,
          requested_node_id: requested,
          inventory: { hostname: `${requested}.nodes.example.net`, os: 'debian-12', arch: 'x86_64', has_systemd: true, capabilities: ['wireguard', 'bird'] },
        },
        { headers: { 'x-forwarded-for': `198.51.100.${20 + i}` } },
      ),
      200,
      `register ${requested}`,
    );
  }
  const pending = ok(await admin.get('/admin/registrations?status=pending'), 200, 'registrations').body.registrations as {
    registration_id: string;
    requested_node_id?: string;
    node_id?: string;
  }[];
  const regOf = (id: string) => pending.find((r) => (r.requested_node_id ?? r.node_id) === id)?.registration_id;
  const registrations = { approve: regOf('edge-par-1') ?? pending[0].registration_id, reject: regOf('edge-waw-1') ?? pending[1].registration_id };

  mark('enrollment, registrations');
  // Agent releases: the running one and a newer target.
  const releases = { current: '1.0.217', target: '1.0.220' };
  for (const version of [releases.current, releases.target]) {
    const form = new FormData();
    form.append('version', version);
    form.append('files', new Blob([new TextEncoder().encode(`dn42 agent ${version}`)]), `dn42_agent-${version}.tgz`);
    form.append('files', new Blob([new TextEncoder().encode(`dn42 common ${version}`)]), `dn42_common-${version}-py3-none-any.whl`);
    const res = await fetch(`${url}/control/v1/admin/agent-releases`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CONSOLE_ADMIN_TOKEN}` },
      body: form,
    });
    expect(res.status, `release ${version}: ${await res.clone().text()}`).to.equal(201);
  }
  ok(await admin.post('/admin/agent-releases/target', { version: releases.target }), 200, 'release target');

  mark('releases');
  // Registry names (the replica syncs its checkout).
  ok(await admin.post('/ui/registry/sync'), 200, 'registry sync');

  mark('registry sync');
  // The operator account.
  const account = { username: 'operator', password: 'correct horse battery staple' };
  await addAccount(sys, account.username, account.password);

  await sys.context.background.drain();
  mark('account');
  /** What the agents send on their own after the seed: a runtime snapshot of every reporting node at `t` (now). */
  const report = async (t: number) => {
    for (const n of reporting) await postSnapshot(n, t);
  };
  return {
    report,
    end,
    generations,
    latestGeneration,
    registrations,
    enrollmentTokenId: enrollment.body.token_id as string,
    dns: { groupId, zoneId, zone: 'alpha.dn42', recordIds },
    releases,
    account,
  };
}

/** A routing table of a node: its own prefixes, routes from its peers with every RPKI state; `k` 0 is an hour ago (fewer routes). */
function routesOf(n: NodeSeed, k: number) {
  const index = SEED.indexOf(n);
  const own = [
    { prefix: `172.20.9.${index * 16}/28`, protocol: 'static_own', origin_asn: FLEET_ASN, as_path: [], rpki: 'valid', local: true },
    { prefix: `fd42:4242:9:${index}::/64`, protocol: 'static_own', origin_asn: FLEET_ASN, as_path: [], rpki: 'valid', local: true },
  ];
  const learnt: Record<string, unknown>[] = [];
  const origins = [4242420002, 4242420003, 4242420011, 4242420012, 4242420077, 4242420100, 4242420101];
  const count = 180 + index * 25 + k * 12;
  for (let r = 0; r < count; r++) {
    const origin = origins[r % origins.length];
    const peer = n.peers[r % Math.max(1, n.peers.length)];
    const via = peer ? PEER_ASNS[peer] : origin;
    const v6 = r % 3 === 0;
    const rpki = r % 17 === 0 ? 'invalid' : r % 5 === 0 ? 'not_found' : 'valid';
    learnt.push({
      prefix: v6 ? `fd42:${(r + 0x100).toString(16)}::/48` : `172.22.${r >> 2}.${(r & 3) * 64}/26`,
      protocol: peer ? `dn42_${peer}_${v6 ? 'v6' : 'v4'}` : 'ibgp',
      origin_asn: origin,
      as_path: via === origin ? [origin] : [via, origin],
      rpki,
      local: false,
    });
  }
  learnt.push({
    prefix: FLAPPING_PREFIX,
    protocol: 'dn42_beta_v4',
    origin_asn: 4242420077,
    as_path: [PEER_ASNS.beta, 4242420077],
    rpki: 'valid',
    local: false,
  });
  return [...own, ...learnt];
}

// ---------------------------------------------------------------------------
// Pages

let built: Promise<unknown> | undefined;

/**
 * Builds the console once per mocha process when no build is there (as the shell
 * spec does; `npm run build:web` rebuilds after a change to web/).
 */
export function ensureConsoleBuilt(): Promise<unknown> {
  built ??= existsSync(join(WEB_BUILD_DIR, 'console', 'index.html')) ? Promise.resolve() : buildWeb(['console']);
  return built;
}

export interface PageOptions {
  viewport: 'desktop' | 'phone';
  colorScheme?: 'light' | 'dark';
  /** Hosts the page may talk to (default 127.0.0.1 and localhost: the control servers). */
  allowedHosts?: string[];
}

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Requests that failed on the network (aborted navigations excepted) or answered 5xx: "METHOD url: reason". */
  failedRequests: string[];
  /** Console errors and uncaught page errors. */
  errors: string[];
  /** Requests to another host (aborted, never sent). */
  thirdParty: string[];
  /** Fails when anything above was recorded; `allow` lists patterns of expected failures or errors (e.g. a 401 the test provokes). */
  assertClean(allow?: RegExp[]): void;
  close(): Promise<void>;
}

export const VIEWPORTS = {
  desktop: { viewport: { width: 1280, height: 900 }, isMobile: false, hasTouch: false, deviceScaleFactor: 1 },
  phone: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 },
} as const;

/** A fresh context and page that records failed requests, console errors and third-party requests (which are aborted). */
export async function openPage(browser: Browser, options: PageOptions): Promise<ConsolePage> {
  const allowed = new Set(options.allowedHosts ?? ['127.0.0.1', 'localhost']);
  const context = await browser.newContext({
    ...VIEWPORTS[options.viewport],
    colorScheme: options.colorScheme ?? 'light',
    timezoneId: 'Europe/Berlin',
    locale: 'en-GB',
  });
  const failedRequests: string[] = [];
  const errors: string[] = [];
  const thirdParty: string[] = [];
  await context.route(
    (u) => !['data:', 'blob:', 'about:'].includes(u.protocol) && !allowed.has(u.hostname),
    (route) => {
      thirdParty.push(`${route.request().method()} ${route.request().url()}`);
      return route.abort('blockedbyclient');
    },
  );
  const page = await context.newPage();
  page.on('requestfailed', (req) => {
    const reason = req.failure()?.errorText ?? 'failed';
    // A navigation or a closed stream cancels requests in flight: not a failure of the page.
    if (reason.includes('ERR_ABORTED') || reason.includes('BLOCKED_BY_CLIENT')) return;
    failedRequests.push(`${req.method()} ${req.url()}: ${reason}`);
  });
  page.on('response', (res) => {
    if (res.status() >= 500) failedRequests.push(`${res.request().method()} ${res.url()}: ${res.status()}`);
  });
  page.on('console', (msg) => {
    // The blocked third-party request is recorded under thirdParty already.
    if (msg.type() === 'error' && !msg.text().includes('ERR_BLOCKED_BY_CLIENT')) errors.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => errors.push(`page error: ${err.message}`));
  return {
    context,
    page,
    failedRequests,
    errors,
    thirdParty,
    assertClean(allow: RegExp[] = []) {
      const keep = (list: string[]) => list.filter((s) => !allow.some((re) => re.test(s)));
      expect(thirdParty, 'third-party requests').to.deep.equal([]);
      expect(keep(failedRequests), 'failed requests').to.deep.equal([]);
      expect(keep(errors), 'console errors').to.deep.equal([]);
    },
    close: () => context.close(),
  };
}

/** A full-page screenshot into `.data/screenshots/console-<name>.png`; answers the path. */
export async function shot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const path = `${SCREENSHOTS}/console-${name}.png`;
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Puts `token` in the console's session storage before any script of the
 * origin runs, so the page opens signed in. Once per tab: a sign-out that
 * removes the token stays signed out across reloads.
 */
export async function signInWithToken(page: Page, url: string, token: string): Promise<void> {
  const origin = new URL(url).origin;
  await page.context().addInitScript(
    ({ origin, key, token }) => {
      const marker = `${key}.fixture-set`;
      if (window.location.origin !== origin || window.sessionStorage.getItem(marker)) return;
      window.sessionStorage.setItem(key, token);
      window.sessionStorage.setItem(marker, '1');
    },
    { origin, key: TOKEN_KEY, token },
  );
}
