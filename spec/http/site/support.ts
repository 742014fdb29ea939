import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createControlApp } from '../../../http/control/app.js';
import { buildSite } from '../../../web/build.js';
import { startSite, type Site, type SiteOptions } from '../../../http/site/app.js';
import { loadConfig } from '../../../infra/config.js';
import { recordHeartbeat } from '../../../infra/telemetry/liveness.js';
import { issueAgentToken } from '../../support/agents.js';
import { api, expectResponse } from '../../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';
import { reconciliation, snapshot } from '../control/agent/telemetry-support.js';

export const ADMIN_TOKEN = 'site-spec-admin-token-0123456789';
export const FLEET_ASN = 4242420042;

/** The seeded fleet: node → site, and which nodes report (online) with how many established sessions. */
export const NODES = [
  { id: 'core-ams-1', site: 'ams1', sessions: 3, routes: 700 },
  { id: 'edge-fra-1', site: 'fra1', sessions: 2, routes: 640 },
  { id: 'edge-fra-2', site: 'fra2', sessions: 1, routes: 660 },
  { id: 'edge-lon-1', site: 'lon1', sessions: 2, routes: 720 },
  { id: 'edge-nyc-1', site: 'nyc1', sessions: 1, routes: 610 },
  // Never reports: an offline place.
  { id: 'edge-sin-1', site: 'sin1', sessions: 0, routes: 0 },
] as const;

/** WireGuard links between nodes (internal peerings, published as adjacency). */
export const NODE_LINKS = [
  ['edge-fra-1', 'core-ams-1'],
  ['edge-fra-1', 'edge-fra-2'],
  ['core-ams-1', 'edge-lon-1'],
  ['edge-lon-1', 'edge-nyc-1'],
  ['edge-fra-2', 'edge-sin-1'],
] as const;

/** The places the public map shows for the seed (folded by city) and the links between them. */
export const PLACES = ['AMS', 'FRA', 'LON', 'NYC', 'SIN'];
export const PLACE_LINKS = [
  ['AMS', 'FRA'],
  ['AMS', 'LON'],
  ['FRA', 'SIN'],
  ['LON', 'NYC'],
];

const key = (n: number) => `${String.fromCharCode(97 + n)}QzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=`;

/** A control server on a fresh database (a real one: PostgreSQL, projections, the public routes). */
export interface Control {
  sys: TestSystem;
  url: string;
  /** Stops the HTTP server only (the database stays): the site's control server is down. */
  stopHttp(): Promise<void>;
  close(): Promise<void>;
}

export async function startControl(): Promise<Control> {
  const sys = await createTestSystem({ env: { ADMIN_TOKEN } });
  const started = await startApp(createControlApp(sys.context));
  let httpOpen = true;
  const stopHttp = async () => {
    if (!httpOpen) return;
    httpOpen = false;
    await started.close();
  };
  return {
    sys,
    url: started.url,
    stopHttp,
    close: async () => {
      await stopHttp();
      await sys.close();
    },
  };
}

/** Seeds `NODES` and `NODE_LINKS` through the admin and agent APIs; the reporting nodes send a snapshot, a table and a heartbeat. */
export async function seedFleet(control: Control): Promise<void> {
  const admin = api(`${control.url}/control/v1`, { token: ADMIN_TOKEN });
  const ok = async (p: Promise<{ status: number; text: string }>, status = 201) => expectResponse((await p) as never).status(status);
  for (const [i, n] of NODES.entries()) {
    await ok(
      admin.post('/admin/nodes', {
        node_id: n.id,
        asn: FLEET_ASN,
        router_id: `172.20.9.${i + 1}`,
        site: n.site,
        loopback_ipv4: `172.20.9.${i + 1}`,
        loopback_ipv6: `fd42:4242:9::${i + 1}`,
        link_local: `fe80::${i + 1}`,
        ipv4_prefixes: ['172.20.9.0/27'],
        ipv6_prefixes: ['fd42:4242:9::/48'],
        inventory: { hostname: `${n.id}.nodes.example.net`, capabilities: ['bird', 'wireguard'] },
      }),
    );
  }
  for (const [i, [from, to]] of NODE_LINKS.entries()) {
    const port = 52801 + i;
    const name = `wg_${to.split('-').slice(1).join('')}`;
    await ok(
      admin.post(`/admin/nodes/${from}/peerings/provision`, {
        peering: { name, remote_asn: FLEET_ASN, remote_node_id: to, is_internal: true },
        interface_spec: {
          name,
          listen_port: port,
          addresses: [`10.99.9.${2 * i}/31`, 'fe80::99/64'],
          cost: 10 + i,
          peer: { endpoint: `${to}.nodes.example.net:${port}` },
        },
      }),
    );
  }
  for (const [i, n] of NODES.entries()) {
    if (n.sessions === 0) continue;
    const { token } = await issueAgentToken(control.url, ADMIN_TOKEN, n.id);
    const agent = api(`${control.url}/control/v1`, { token });
    await ok(agent.post('/agent/wireguard-keys', { node_id: n.id, public_key: key(i) }), 200);
    const sessions = Object.fromEntries(Array.from({ length: n.sessions }, (_, s) => [`peer${s}`, 'established']));
    await ok(agent.post('/agent/runtime-snapshot', snapshot(n.id, sessions)), 200);
    const routes = Array.from({ length: n.routes }, (_, r) => ({
      prefix: `172.22.${r >> 8}.${r & 255}/32`,
      protocol: 'peer0',
      origin_asn: 4242420002,
      as_path: [4242420002],
      rpki: 'valid',
      local: false,
    }));
    await ok(agent.post('/agent/routing-table', { node_id: n.id, captured_at: '2026-11-01T12:00:00Z', rpki_observed: true, routes }), 200);
    await ok(agent.post('/agent/reconciliation-report', reconciliation(n.id)), 200);
    await recordHeartbeat(control.sys.pool, n.id, { agent_version: '1.0.217', applied_generation: 1, apply_status: 'succeeded' }, control.sys.clock.now());
  }
  await control.sys.context.background.drain();
}

/** A started site: its URL, the Site (bake, snapshot) and its own data directory. */
export interface RunningSite {
  url: string;
  site: Site;
  dataDir: string;
  close(): Promise<void>;
}

let built: Promise<unknown> | undefined;

/** Builds the site once per mocha process (the build is the same for every suite). */
export function ensureBuilt(): Promise<unknown> {
  built ??= buildSite();
  return built;
}

/** Starts the site with `env` (CONTROL_URL and the rest) on an ephemeral port, with a fresh data directory unless one is given. */
export async function startSiteWith(env: Record<string, string>, options: SiteOptions & { dataDir?: string } = {}): Promise<RunningSite> {
  await ensureBuilt();
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'site-spec-')));
  const config = loadConfig({ LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...env, DATA_DIR: dataDir });
  const { createLogger } = await import('../../../infra/logger.js');
  const site = await startSite(config, createLogger(config.logLevel), { bakeEveryMs: 0, ...options });
  const started = await startApp(site.app);
  return {
    url: started.url,
    site,
    dataDir,
    close: async () => {
      site.stop();
      await started.close();
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One request with node:http: the path sent as written (no normalisation of `..`), the body as the bytes on the wire (no decompression). */
export function raw(url: string, path: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
