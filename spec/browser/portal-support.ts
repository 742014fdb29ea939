import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { createControlApp } from '../../http/control/app.js';
import { registerLocalPortalClient } from '../../http/control/portal/local-client.js';
import { buildPage, buildWeb } from '../../web/build.js';
import { onlineAgentCount } from '../../infra/agent-hub/presence.js';
import { WEB_BUILD_DIR, WEB_SOURCE_DIR } from '../../web/files.js';
import { snapshot } from '../http/control/agent/telemetry-support.js';
import { node } from '../http/control/fleet/support.js';
import { agentSocket, type AgentClient } from '../support/agent-socket.js';
import { issueAgentToken } from '../support/agents.js';
import { wgGenkey, wgPubkey } from '../support/peer-config-check.js';
import { api, expectResponse } from '../support/http.js';
import { GAMMA_ASN, GAMMA_MNT, startOidc, type OidcFixture } from '../support/oidc.js';
import { freePort } from '../support/ports.js';
import { rpsl } from '../support/registry.js';
import { startApp } from '../support/system.js';
import { eventually } from '../support/wait.js';
import { runAsShown } from './authorize-support.js';
import { openPage, type ConsolePage } from './console-support.js';

/**
 * The world a portal browser spec runs in: the real identity service (with its
 * authorization page built) over a registry replica where GAMMA-MNT /
 * AS4242420010 holds a real SSH key and route objects, a control server in the
 * same process with the portal login registered at that identity service (the
 * `npm start` wiring, so PORTAL_URL is its default `${control.url}/portal`),
 * and nodes an administrator opened for autopeering, each with an agent that
 * registered its WireGuard key and keeps its socket open (so probes can run).
 */

export const PORTAL_ADMIN_TOKEN = 'portal-browser-admin-token-0123456789';

/** Where the portal keeps its session token (web/portal/session.svelte.ts). */
export const TOKEN_KEY = 'dn42.portal.token';

type Client = ReturnType<typeof api>;

export interface WorldNode {
  node_id: string;
  /** The dial-in host of its autopeering policy: an IP literal, so `wg setconf` can parse an `Endpoint` made of it without DNS. */
  endpoint_host: string;
  /** The WireGuard public key its agent registered (a real `wg genkey | wg pubkey` key; the `provision.node_public_key` of its requests). */
  public_key: string;
  /** Its facts as created (`node()` of the fleet specs: AS4242420001, link-local fe80::1, loopbacks 172.20.0.1 and fd42:4242:1::1). */
  asn: number;
  link_local: string;
  loopback_ipv4: string;
  loopback_ipv6: string;
  /** The agent: its HTTP client (Bearer agent token), its open socket and token. */
  agent: { token: string; http: Client; socket: AgentClient };
}

export interface PortalWorld {
  /** Identity service, registry replica and the shared test system (`f.sys.clock` is the servers' clock, `f.issuer` the identity origin). */
  f: OidcFixture;
  /** The control server's origin, e.g. `http://127.0.0.1:41234`. */
  controlUrl: string;
  /** `${controlUrl}/portal`: the default PORTAL_URL the login callback sends the browser to. */
  portalUrl: string;
  /** `${controlUrl}/control/v1` with the admin token. */
  admin: Client;
  /** `${controlUrl}/control/v1` without a token (pass `{ token }` per call). */
  portal: Client;
  /** The test maintainer: GAMMA-MNT, AS4242420010 (GAMMA-AS). */
  asn: number;
  mntner: string;
  /** GAMMA's registry route objects (the portal offers them for the tunnel addresses). */
  routes: { route: string[]; route6: string[] };
  /** Addresses inside those routes, usable as `peer_ipv4` / `peer_ipv6`. */
  tunnel: { ipv4: string; ipv6: string };
  /** The nodes open for peering, by id (default fra1, ams1, ber1: one per session form, since a node takes one peering per AS). */
  nodes: Record<string, WorldNode>;
  /** A throw-away HOME whose `~/.ssh/id_ed25519` is GAMMA's registered key, for the signing command the page shows. */
  sshHome: string;
  close(): Promise<void>;
}

export interface PortalWorldOptions {
  /** Node ids to open (default `['fra1', 'ams1', 'ber1']`). */
  nodes?: string[];
  /** `max_sessions` of each node's policy (default 5). */
  maxSessions?: number;
  /** More settings of the shared system (e.g. the notification specs' `NOTIFY_WEBHOOK_ALLOW`). */
  env?: Record<string, string>;
}

/** Starts the identity service, registry replica, control server with the portal, and the opened nodes with their agents. */
export async function startPortalWorld(options: PortalWorldOptions = {}): Promise<PortalWorld> {
  const ids = options.nodes ?? ['fra1', 'ams1', 'ber1'];
  await buildPage();
  const controlPort = await freePort();
  const f = await startOidc({ CONTROL_URL: `http://127.0.0.1:${controlPort}`, ADMIN_TOKEN: PORTAL_ADMIN_TOKEN, ...options.env });
  const routes = { route: ['172.20.42.0/27'], route6: ['fd42:4242:10::/48'] };
  for (const [kind, prefix] of [
    ['route', routes.route[0]],
    ['route6', routes.route6[0]],
  ]) {
    f.repo.put(
      kind,
      prefix,
      rpsl([
        [kind, prefix],
        ['origin', `AS${GAMMA_ASN}`],
        ['mnt-by', GAMMA_MNT],
        ['source', 'DN42'],
      ]),
    );
  }
  await f.sync();
  const local = await registerLocalPortalClient(f.sys.context);
  if (!local) throw new Error('the portal login client could not be registered at the local identity service');
  const control = await startApp(createControlApp(f.sys.context, { portal: { localClient: local } }), controlPort);
  const admin = api(`${control.url}/control/v1`, { token: PORTAL_ADMIN_TOKEN });
  const nodes: Record<string, WorldNode> = {};
  const sockets: AgentClient[] = [];
  const sshHome = mkdtempSync(join(tmpdir(), 'dn42-portal-home-'));
  const world: PortalWorld = {
    f,
    controlUrl: control.url,
    portalUrl: `${control.url}/portal`,
    admin,
    portal: api(`${control.url}/control/v1`),
    asn: GAMMA_ASN,
    mntner: GAMMA_MNT,
    routes,
    tunnel: { ipv4: '172.20.42.2', ipv6: 'fd42:4242:10::2' },
    nodes,
    sshHome,
    async close() {
      for (const s of sockets) await s.close();
      await control.close();
      await f.done();
      rmSync(sshHome, { recursive: true, force: true });
    },
  };
  try {
    mkdirSync(join(sshHome, '.ssh'), { mode: 0o700 });
    copyFileSync(f.ssh.path, join(sshHome, '.ssh', 'id_ed25519'));
    chmodSync(join(sshHome, '.ssh', 'id_ed25519'), 0o600);
    for (const [i, id] of ids.entries()) {
      const facts = node(id, { router_id: `172.20.0.${i + 1}` });
      expectResponse(await admin.post('/admin/nodes', facts)).status(201);
      const endpoint_host = `192.0.2.${i + 1}`;
      expectResponse(
        await admin.put(`/admin/autopeering/nodes/${id}`, {
          enabled: true,
          endpoint_host,
          max_sessions: options.maxSessions ?? 5,
          region: 'Europe',
          country_code: 'DE',
          description: `${id} spec node`,
          bandwidth_mbps: 1000,
          monthly_quota_gb: 500,
        }),
      ).status(200);
      const token = (await issueAgentToken(control.url, PORTAL_ADMIN_TOKEN, id)).token;
      const http = api(`${control.url}/control/v1`, { token });
      const public_key = await wgPubkey(await wgGenkey());
      expectResponse(await http.post('/agent/wireguard-keys', { node_id: id, public_key })).status(200);
      const socket = agentSocket(control.url, `ws/${id}`, token);
      sockets.push(socket);
      await socket.next('hello');
      await eventually(async () => (await onlineAgentCount(f.sys.pool, id)) > 0, 5000, `agent presence of ${id}`);
      nodes[id] = {
        node_id: id,
        endpoint_host,
        public_key,
        asn: facts.asn as number,
        link_local: facts.link_local as string,
        loopback_ipv4: facts.loopback_ipv4 as string,
        loopback_ipv6: facts.loopback_ipv6 as string,
        agent: { token, http, socket },
      };
    }
  } catch (err) {
    await world.close();
    throw err;
  }
  return world;
}

/** Newest modification time (ms) of the files below `dir`. */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** Builds the portal unless its build is newer than its sources (the pretest build of `npm test` serves as is). */
export async function ensurePortalBuilt(): Promise<void> {
  const index = join(WEB_BUILD_DIR, 'portal', 'index.html');
  const sources = Math.max(
    newest(join(WEB_SOURCE_DIR, 'portal')),
    newest(join(WEB_SOURCE_DIR, 'shared')),
    statSync(new URL('../../domain/autopeering/peer-config.ts', import.meta.url)).mtimeMs,
  );
  if (!existsSync(index) || statSync(index).mtimeMs < sources) await buildWeb(['portal']);
}

/** Opens a tab already logged in with `token` (the portal's session storage, set before the app runs). */
export async function loggedInTab(browser: Browser, world: PortalWorld, token: string, options: Parameters<typeof openPage>[1]): Promise<ConsolePage> {
  const tab = await openPage(browser, options);
  await tab.context.clock.install({ time: world.f.sys.clock.now() });
  await tab.context.addInitScript(
    ({ key, token }) => {
      if (!window.sessionStorage.getItem(key)) window.sessionStorage.setItem(key, token);
    },
    { key: TOKEN_KEY, token },
  );
  return tab;
}

export interface BrowserLogin {
  /** The one-time handoff code of `{portal_url}/auth/complete?handoff=...`. */
  handoff: string;
  /** The completion URL the browser reached (its `next` parameter when kept). */
  url: URL;
}

/**
 * A login as a user does it in the browser: `GET /control/v1/autopeering/auth/login`
 * (with `next`), the redirect to the identity service's authorization page,
 * the ASN typed, the page's proof of work, "Sign with the SSH key", the command
 * the page shows run as shown by `sh` in `world.sshHome` (`ssh-keygen -Y sign`),
 * the signature pasted and verified, the passkey offer declined ("Not now"),
 * consent given, and the callback's redirect to `{portal_url}/auth/complete`.
 * Resolves as soon as the browser commits that URL with its handoff code; the
 * portal page then runs there and exchanges the code itself. With
 * `holdCompletion`, the fixture answers that URL with a placeholder page
 * instead, so the code stays unspent for {@link exchangeHandoff}.
 */
export async function loginThroughBrowser(page: Page, world: PortalWorld, options: { next?: string; holdCompletion?: boolean } = {}): Promise<BrowserLogin> {
  const complete = `${world.portalUrl}/auth/complete`;
  if (options.holdCompletion) {
    // The completion page is answered here, so the portal page cannot spend the code: the caller exchanges it.
    await page.route(
      (url) => url.href.startsWith(complete),
      (route) =>
        route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: '<!doctype html><title>held</title><p>handoff held by the spec</p>' }),
    );
  }
  const arrived = page.waitForURL((url) => url.href.startsWith(complete), { waitUntil: 'commit', timeout: 120_000 });
  arrived.catch(() => {}); // awaited below; a failure earlier in the flow reports its own error
  const query = options.next === undefined ? '' : `?next=${encodeURIComponent(options.next)}`;
  await page.goto(`${world.controlUrl}/control/v1/autopeering/auth/login${query}`);
  await page.waitForURL((url) => url.href.startsWith(`${world.f.issuer}/authorize?`));
  await page.getByRole('heading', { name: 'Sign in to Autopeering portal' }).waitFor();
  await page.getByLabel('AS number').fill(`AS${world.asn}`);
  await page.keyboard.press('Enter');
  // The proof of work is solved in the browser; it can take a while on a busy machine.
  await page.getByRole('heading', { name: `Verify AS${world.asn} (GAMMA-AS)` }).waitFor({ timeout: 90_000 });
  await page.getByRole('button', { name: /Sign with the SSH key ssh-ed25519/ }).click();
  await page.getByRole('heading', { name: 'Sign with your SSH key' }).waitFor();
  const command = (await page.locator('#command').textContent()) ?? '';
  expect(command).to.match(/ssh-keygen -Y sign -n dn42-autopeer -f ~\/\.ssh\/id_ed25519$/);
  await page.getByLabel('Signature').fill(runAsShown(command, { HOME: world.sshHome }));
  await page.getByRole('button', { name: 'Verify' }).click();
  // Then the passkey offer (when GAMMA has none) and the consent, unless the browser is already on its way back.
  const enrol = page.getByRole('heading', { name: 'Save a passkey?' });
  const consent = page.getByRole('heading', { name: 'Allow Autopeering portal to sign you in?' });
  const next = await Promise.race([
    enrol.waitFor({ timeout: 60_000 }).then(() => 'enrol' as const),
    consent.waitFor({ timeout: 60_000 }).then(() => 'consent' as const),
    arrived.then(() => 'done' as const),
  ]);
  if (next === 'enrol') {
    await page.getByRole('button', { name: 'Not now' }).click();
    await Promise.race([consent.waitFor({ timeout: 60_000 }), arrived]);
  }
  if (next !== 'done' && (await consent.isVisible())) await page.getByRole('button', { name: 'Allow' }).click();
  await arrived;
  const url = new URL(page.url());
  const handoff = url.searchParams.get('handoff');
  if (!handoff) throw new Error(`the login ended at ${url.href} without a handoff code (error=${url.searchParams.get('error')})`);
  return { handoff, url };
}

export interface ExchangedSession {
  session_token: string;
  profile: { sub: string; asn: number | null; mntner: string | null; route: string[]; route6: string[] };
  expires_at: string;
}

/** `POST /control/v1/autopeering/auth/exchange` over HTTP (200 expected): the portal session the page would keep. */
export async function exchangeHandoff(world: PortalWorld, handoff: string): Promise<ExchangedSession> {
  const res = await world.portal.post('/autopeering/auth/exchange', { handoff });
  expectResponse(res).status(200);
  return res.body;
}

/** What the agent reports of a request's sessions in {@link postSnapshot}. */
export interface SnapshotOptions {
  /** BGP state of every session of the request (default `established`). */
  state?: string;
  /** Seconds since the sessions reached that state (default 3600). */
  sinceSeconds?: number;
  /** Route counts: per protocol, and per family for the multiprotocol forms (defaults 12/34, v4 5/30, v6 7/4). */
  routesImported?: number;
  routesExported?: number;
  /** WireGuard bytes (default 4096 received, 8192 sent) and handshake (default the snapshot time). */
  rxBytes?: number;
  txBytes?: number;
  /** The snapshot time (default the servers' clock, `world.f.sys.clock`). */
  capturedAt?: Date;
}

/**
 * The node's agent posts a runtime snapshot (`POST /agent/runtime-snapshot`)
 * in which the request's sessions are in `state` and its WireGuard peer has
 * a handshake and bytes, so the request detail's `live` shows them. `request`
 * is a portal request row (the 201 of the create, or the detail).
 */
export async function postSnapshot(
  world: PortalWorld,
  request: { node_id: string; public_key: string | null; interface_name: string | null; session_names: string[]; listen_port: number | null },
  options: SnapshotOptions = {},
): Promise<Record<string, unknown>> {
  const n = world.nodes[request.node_id] ?? expect.fail(`no node ${request.node_id} in the world`);
  const now = options.capturedAt ?? world.f.sys.clock.now();
  const since = new Date(now.getTime() - (options.sinceSeconds ?? 3600) * 1000).toISOString();
  const single = request.session_names.length === 1;
  const snap = snapshot(
    request.node_id,
    {},
    {
      captured_at: now.toISOString(),
      interfaces: [{ name: request.interface_name, up: true, mtu: 1420, rx_bytes: options.rxBytes ?? 4096, tx_bytes: options.txBytes ?? 8192 }],
      bgp_protocols: request.session_names.map((name) => ({
        name,
        state: options.state ?? 'established',
        since,
        remote_asn: world.asn,
        routes_imported: options.routesImported ?? 12,
        routes_exported: options.routesExported ?? 34,
        ...(single ? { routes_imported_v4: 5, routes_exported_v4: 30, routes_imported_v6: 7, routes_exported_v6: 4 } : {}),
      })),
      wireguard_interfaces: [
        {
          name: request.interface_name,
          listen_port: request.listen_port,
          peers: [
            { public_key: request.public_key, latest_handshake_at: now.toISOString(), rx_bytes: options.rxBytes ?? 4096, tx_bytes: options.txBytes ?? 8192 },
          ],
        },
      ],
    },
  );
  expectResponse(await n.agent.http.post('/agent/runtime-snapshot', snap)).status(200);
  return snap;
}

/** Output lines an agent sends for a probe (what `ping` and the MTU bisection print). */
export const PROBE_LINES = {
  latency: ['10 packets transmitted, 10 received, 0% packet loss, time 9012ms', 'rtt min/avg/max/mdev = 10.100/12.500/15.200/1.300 ms'],
  mtu: ['MTU bisection', 'PMTU_PAYLOAD 1372'],
} as const;

/**
 * The agent's side of the next `kind` probe job of `nodeId` (run it alongside
 * the page's click; the MTU probe that runs once after a creation is one too):
 * takes its `probe_request` doorbell, opens the job stream, sends `lines` as
 * output (default {@link PROBE_LINES}: 12.5 ms average, 15.2 ms max, 0 % loss;
 * PMTU 1420) and `done`. Resolves with the job's spec.
 */
export async function answerProbe(
  world: PortalWorld,
  nodeId: string,
  kind: 'mtu' | 'latency',
  lines: readonly string[] = PROBE_LINES[kind],
  done: Record<string, unknown> = { exit_code: 0 },
): Promise<Record<string, unknown>> {
  const n = world.nodes[nodeId] ?? expect.fail(`no node ${nodeId} in the world`);
  const tool = kind === 'mtu' ? 'mtu' : 'ping';
  const request = await n.agent.socket.next((m) => m.type === 'probe_request' && m.spec?.tool === tool, 30_000);
  const stream = agentSocket(world.controlUrl, `probe-stream/${request.probe_id}`, n.agent.token);
  await new Promise((resolve) => stream.ws.once('open', resolve));
  for (const text of lines) stream.send({ type: 'output', probe_id: request.probe_id, text });
  stream.send({ type: 'done', probe_id: request.probe_id, ...done });
  await stream.closed;
  return request.spec as Record<string, unknown>;
}
