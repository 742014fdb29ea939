import { mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { encodeTicket } from '../infra/captcha/index.js';
import { peerConfig, PRIVATE_KEY_PLACEHOLDER, LISTEN_PORT_PLACEHOLDER, type PeerConfigRequest } from '../domain/autopeering/peer-config.js';
import { attempt, LabError, run, waitFor } from './exec.js';
import { client, expectStatus, type Client } from './http.js';
import { inNamespace } from './netns.js';
import { startBird, wgDirOf, wireguardGoLink } from './nodes.js';
import { alive, spawnDetached } from './processes.js';
import { identityUrl, controlUrl } from './servers.js';
import { labPaths, type LabPeerRecord, type LabState } from './state.js';

/**
 * An external peer: another network (its own ASN of the lab registry, its own
 * namespace with BIRD and WireGuard) that sets up its peering the way a dn42
 * operator does through the portal: it logs in with its ASN (an SSH signature
 * over the identity service's challenge, `ssh-keygen -Y sign -n
 * dn42-autopeer`), requests a peering with a node, and applies exactly what
 * the portal shows it: the wg-quick file (stripped by `wg-quick strip`, its
 * `PostUp` address lines and MTU run as wg-quick would) and the BIRD snippet.
 * The request is provisioned at once by the node's autopeering policy.
 */

export const PEER_LISTEN_PORT_BASE = 51900;
const SSH_NAMESPACE = 'dn42-autopeer';

/** A solved proof-of-work ticket, as the authorization page's widget makes one. */
async function powTicket(identity: Client): Promise<string> {
  const challenge = expectStatus(await identity.get('/api/v1/captcha/challenge'), 'captcha challenge', 200);
  const solution = await solveChallenge({ challenge, deriveKey });
  if (!solution) throw new LabError('the proof-of-work captcha was not solved');
  return encodeTicket(challenge, solution);
}

/** An identity session for `asn`, earned by signing the identity service's challenge with the maintainer's SSH key. */
async function sshSession(identity: Client, asn: number, key: string): Promise<string> {
  const options = expectStatus(
    await identity.post('/api/v1/verification-options', { asn, captcha_token: await powTicket(identity) }),
    `verification options of AS${asn}`,
    200,
  );
  const ssh = (options.options as { id: string; kind: string }[]).find((o) => o.kind === 'ssh');
  if (!ssh) throw new LabError(`AS${asn} has no SSH verification option in the lab registry`);
  const challenge = expectStatus(await identity.post('/api/v1/challenge', { asn, option_id: ssh.id }), `challenge for AS${asn}`, 201);
  const answer = execFileSync('ssh-keygen', ['-Y', 'sign', '-f', key, '-n', SSH_NAMESPACE], {
    input: challenge.nonce,
    stdio: ['pipe', 'pipe', 'ignore'],
  }).toString('utf8');
  const submitted = expectStatus(
    await identity.post('/api/v1/challenge/submit', { challenge_id: challenge.challenge_id, answer }),
    `signed challenge of AS${asn}`,
    200,
  );
  return submitted.token as string;
}

/** The portal login of a browser, step by step through the API: login, the authorization page's context and approval, the callback, the handoff exchange. */
export async function portalLogin(state: LabState, asn: number, key: string): Promise<string> {
  const control = client(controlUrl(state));
  const identity = client(identityUrl(state));
  const login = await control.get('/control/v1/autopeering/auth/login');
  if (login.status !== 302) throw new LabError(`portal login: HTTP ${login.status} ${login.text.slice(0, 200)}`);
  const authorize = new URL(login.headers.get('location')!);
  const session = await sshSession(identity, asn, key);
  const context = expectStatus(await identity.get(`/api/v1/oauth/authorize-context?${authorize.search.slice(1)}`), 'authorize context', 200);
  const approved = expectStatus(await identity.post('/api/v1/oauth/approve', { ...context.params, deny: false }, session), 'approve the portal', 200);
  const redirect = approved.redirect_to as string;
  const callback = await control.get(redirect.slice(control.base.length));
  if (callback.status !== 302) throw new LabError(`portal callback: HTTP ${callback.status} ${callback.text.slice(0, 200)}`);
  const handoff = new URL(callback.headers.get('location')!).searchParams.get('handoff');
  if (!handoff) throw new LabError(`portal callback gave no handoff: ${callback.headers.get('location')}`);
  const exchanged = expectStatus(await control.post('/control/v1/autopeering/auth/exchange', { handoff }), 'portal handoff exchange', 200);
  return exchanged.session_token as string;
}

const wgKeyPair = () => {
  const privateKey = execFileSync('wg', ['genkey']).toString().trim();
  const publicKey = execFileSync('wg', ['pubkey'], { input: privateKey }).toString().trim();
  return { privateKey, publicKey };
};

/** Runs `argv` in the peer's namespace with its private /run/wireguard. */
export const inPeer = (p: LabPeerRecord, argv: readonly string[]) => run(inNamespace(p.ns, wgDirOf(p), argv));

/** Logs the peer in, requests a peering with its node and answers the request as the portal shows it (provision facts included). */
export async function requestPeering(
  state: LabState,
  p: LabPeerRecord,
  key: string,
  publicKey: string,
): Promise<{ token: string; request: PeerConfigRequest & { id: number } }> {
  const token = await portalLogin(state, p.asn, key);
  const portal = client(`${controlUrl(state)}/control/v1`, token);
  const created = expectStatus(
    await portal.post('/autopeering/requests', {
      node_id: p.node_id,
      public_key: publicKey,
      endpoint: `${p.public_ip}:${PEER_LISTEN_PORT_BASE + p.index}`,
      mtu: 1420,
      notes: `lab peer ${p.name}`,
    }),
    `portal request of AS${p.asn} to ${p.node_id}`,
    201,
  );
  const id = (created.id ?? created.request?.id) as number;
  // The node's WireGuard key is in the provision facts once its agent has registered it.
  const request = await waitFor(`the node key in the portal's answer for AS${p.asn}`, 60_000, async () => {
    const detail = expectStatus(await portal.get(`/autopeering/requests/${id}`), `request ${id}`, 200);
    return detail.provision?.node_public_key ? detail : undefined;
  });
  return { token, request: { ...request, id } };
}

/** Applies the portal's texts in the peer's namespace: WireGuard (wireguard-go, or the kernel's), its addresses, then BIRD with the snippet. */
export async function applyPeerConfig(state: LabState, p: LabPeerRecord, request: PeerConfigRequest, privateKey: string): Promise<void> {
  const config = peerConfig(request);
  const iface = config.interface_name;
  p.interface = iface;
  p.protocols = config.protocol_names;
  mkdirSync(p.dir, { recursive: true });
  const quick = join(p.dir, `${iface}.conf`);
  writeFileSync(
    quick,
    config.wireguard.replace(PRIVATE_KEY_PLACEHOLDER, privateKey).replace(LISTEN_PORT_PLACEHOLDER, String(PEER_LISTEN_PORT_BASE + p.index)),
    { mode: 0o600 },
  );
  const stripped = join(p.dir, `${iface}.setconf`);
  writeFileSync(stripped, await run(['wg-quick', 'strip', quick]), { mode: 0o600 });

  if (state.wireguard === 'userspace') {
    const wgDir = wgDirOf(p);
    spawnDetached(state, labPaths(state.state_dir).logs, `wg-${p.name}`, inNamespace(p.ns, wgDir, [wireguardGoLink(state.state_dir), '-f', iface]));
    const pid = state.processes.find((x) => x.name === `wg-${p.name}`)!.pid;
    await waitFor(`wireguard-go of ${p.name}`, 15_000, async () => {
      if (!alive(pid)) throw new LabError(`wireguard-go of ${p.name} exited (see logs/wg-${p.name}.log)`);
      return existsSync(join(wgDir, `${iface}.sock`)) ? true : undefined;
    });
  } else await run(['ip', '-n', p.ns, 'link', 'add', iface, 'type', 'wireguard']);
  await inPeer(p, ['wg', 'setconf', iface, stripped]);
  const mtu = /^MTU\s*=\s*(\d+)/m.exec(config.wireguard)?.[1];
  if (mtu) await run(['ip', '-n', p.ns, 'link', 'set', 'dev', iface, 'mtu', mtu]);
  await run(['ip', '-n', p.ns, 'link', 'set', 'dev', iface, 'up']);
  // wg-quick runs PostUp lines with bash after the link is up, %i being the interface.
  p.post_up = [...config.wireguard.matchAll(/^PostUp\s*=\s*(.+)$/gm)].map((m) => m[1].replace(/%i/g, iface));
  await runPostUp(p);

  const snippet = join(p.dir, 'peering.conf');
  writeFileSync(snippet, config.bird);
  const conf = join(p.dir, 'bird.conf');
  writeFileSync(conf, peerBirdConfig(p, snippet));
  await startBird(state, p.name, p.ns, conf, p.bird_socket);
}

/**
 * The wg-quick file's `PostUp` lines (its addresses), run as wg-quick runs them after the link is up.
 * Again after the lab takes the tunnel down and up: the link loses its IPv6 addresses when it goes down
 * (a tun device gets no link-local back), and a peer would run `wg-quick up` again too.
 */
export async function runPostUp(p: LabPeerRecord, again = false): Promise<void> {
  for (const line of p.post_up) {
    const outcome = await attempt(['ip', 'netns', 'exec', p.ns, 'sh', '-c', line]);
    if (outcome.code !== 0 && !(again && /exists/i.test(outcome.stderr))) throw new LabError(`${p.name}: ${line}: ${outcome.stderr.trim()}`);
  }
}

const firstHost = (prefix: string, family: 4 | 6) => (family === 4 ? prefix.replace(/\.0\/\d+$/, '.1') : prefix.replace(/::\/\d+$/, '::1'));

/** The peer's own BIRD around the portal's snippet: its prefixes (static), its loopbacks, BGP routes into its kernel table. */
export function peerBirdConfig(p: LabPeerRecord, snippet: string): string {
  return `# dn42lab: BIRD of peer ${p.name} (AS${p.asn}); the peering itself is the portal's snippet, included as given.
router id ${firstHost(p.ipv4_prefix, 4)};
protocol device { scan time 5; }
protocol direct { ipv4; ipv6; interface "lo"; }
protocol kernel { ipv4 { import none; export filter { if source != RTS_BGP then reject; krt_prefsrc = ${firstHost(p.ipv4_prefix, 4)}; accept; }; }; }
protocol kernel { ipv6 { import none; export filter { if source != RTS_BGP then reject; krt_prefsrc = ${firstHost(p.ipv6_prefix, 6)}; accept; }; }; }
protocol static own_v4 { ipv4; route ${p.ipv4_prefix} unreachable; }
protocol static own_v6 { ipv6; route ${p.ipv6_prefix} unreachable; }
include "${snippet}";
`;
}

/** The peer's namespace before BIRD: its loopbacks inside its registered prefixes. */
export async function preparePeer(p: LabPeerRecord): Promise<{ privateKey: string; publicKey: string }> {
  await run(['ip', '-n', p.ns, 'address', 'add', `${firstHost(p.ipv4_prefix, 4)}/32`, 'dev', 'lo']);
  await run(['ip', '-n', p.ns, 'address', 'add', `${firstHost(p.ipv6_prefix, 6)}/128`, 'dev', 'lo']);
  return wgKeyPair();
}
