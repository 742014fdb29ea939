import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_COMMANDS } from '../agent/runtime.js';
import { attempt, LabError, waitFor } from './exec.js';
import { inNamespace } from './netns.js';
import { alive, spawnDetached, stopProcess } from './processes.js';
import { labPaths, PROJECT_ROOT, type LabNodeRecord, type LabState, type WireguardKind } from './state.js';
import { tail } from './servers.js';

/**
 * What runs in a node namespace: its BIRD 2 (foreground, a bootstrap
 * configuration the agent replaces with `birdc configure`), a relay from the
 * namespace's 127.0.0.1:<control port> to the root namespace's control server,
 * and the real agent daemon (`agent/bin.mjs --config`) with a private
 * /run/wireguard, so two nodes' `wireguard-go` sockets of the same interface
 * name never meet.
 */

export const RELAY = join(PROJECT_ROOT, 'lab', 'relay.ts');
const WIREGUARD_GO = '/usr/bin/wireguard-go';

/** `<state>/bin/wireguard-go`, a link to the system's: its path carries the lab's mark into every wireguard-go command line. */
export function wireguardGoLink(stateDir: string): string {
  const bin = labPaths(stateDir).bin;
  const link = join(bin, 'wireguard-go');
  mkdirSync(bin, { recursive: true });
  if (!existsSync(link)) symlinkSync(WIREGUARD_GO, link);
  return link;
}

/** Whether the agent of this tree knows the userspace WireGuard settings (`command.wireguard_go`). */
export const agentKnowsWireguardGo = () => 'wireguard_go' in DEFAULT_COMMANDS;

export const wgDirOf = (n: { dir: string }) => join(n.dir, 'run-wireguard');

export async function startBird(state: LabState, name: string, ns: string, conf: string, socket: string): Promise<void> {
  spawnDetached(state, labPaths(state.state_dir).logs, `bird-${name}`, ['ip', 'netns', 'exec', ns, 'bird', '-f', '-c', conf, '-s', socket]);
  const pid = state.processes.find((p) => p.name === `bird-${name}`)!.pid;
  await waitFor(`BIRD of ${name} answering on ${socket}`, 20_000, async () => {
    if (!alive(pid)) throw new LabError(`BIRD of ${name} exited: ${tail(join(labPaths(state.state_dir).logs, `bird-${name}.log`))}`);
    return (await attempt(['birdc', '-s', socket, 'show', 'status'])).code === 0 ? true : undefined;
  });
}

export async function startNodeBird(state: LabState, n: LabNodeRecord): Promise<void> {
  mkdirSync(n.dir, { recursive: true });
  const conf = join(n.dir, 'bird-bootstrap.conf');
  writeFileSync(
    conf,
    `# dn42lab: bootstrap of ${n.node_id}; the agent loads its rendered configuration with birdc configure.\nrouter id ${n.router_id};\nprotocol device {}\n`,
  );
  await startBird(state, n.node_id, n.ns, conf, n.bird_socket);
}

export async function startRelay(state: LabState, name: string, argv: readonly string[], ns?: string): Promise<void> {
  const base = [process.execPath, '--import', 'tsx', RELAY, ...argv];
  spawnDetached(state, labPaths(state.state_dir).logs, `relay-${name}`, ns ? ['ip', 'netns', 'exec', ns, ...base] : base, { cwd: PROJECT_ROOT });
}

/** The root namespace's end: the unix socket in the state dir to the control server's port. */
export async function startRootRelay(state: LabState): Promise<void> {
  const socket = labPaths(state.state_dir).controlSocket;
  await startRelay(state, 'root', ['unix', socket, String(state.ports.control)]);
  await waitFor('the control relay socket', 15_000, async () => (existsSync(socket) ? true : undefined), 100);
}

export async function startNodeRelay(state: LabState, n: LabNodeRecord): Promise<void> {
  await startRelay(state, n.node_id, ['tcp', String(state.ports.control), labPaths(state.state_dir).controlSocket], n.ns);
  await waitFor(`the control relay in ${n.ns}`, 15_000, async () => {
    const probe = await attempt(['ip', 'netns', 'exec', n.ns, 'bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${state.ports.control}`]);
    return probe.code === 0 ? true : undefined;
  });
}

export function writeAgentConfig(state: LabState, n: LabNodeRecord, enrollmentToken: string): void {
  const lines = [
    `# dn42lab: agent of ${n.node_id}, in namespace ${n.ns}`,
    `controller_url = http://127.0.0.1:${state.ports.control}`,
    `enrollment_token = ${enrollmentToken}`,
    `requested_node_id = ${n.node_id}`,
    `hostname = ${n.node_id}.lab.dn42`,
    `state_dir = ${join(n.dir, 'agent')}`,
    `bird_socket = ${n.bird_socket}`,
    'reconcile_interval_seconds = 300',
    'heartbeat_interval_seconds = 5',
    'routing_interval_seconds = 15',
    'prefix_flaps_interval_seconds = 10',
    'log_level = info',
  ];
  if (agentKnowsWireguardGo()) lines.push(`command.wireguard_go = ${wireguardGoLink(state.state_dir)}`);
  writeFileSync(n.agent_config, `${lines.join('\n')}\n`, { mode: 0o600 });
}

export function startAgent(state: LabState, n: LabNodeRecord, wireguard: WireguardKind = state.wireguard): void {
  const argv = inNamespace(n.ns, wgDirOf(n), [process.execPath, join(PROJECT_ROOT, 'agent/bin.mjs'), '--config', n.agent_config]);
  spawnDetached(state, labPaths(state.state_dir).logs, `agent-${n.node_id}`, argv, {
    cwd: PROJECT_ROOT,
    env: { ...process.env, DN42_AGENT_WIREGUARD_IMPLEMENTATION: wireguard },
  });
}

export async function stopAgent(state: LabState, n: LabNodeRecord, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
  const entry = state.processes.find((p) => p.name === `agent-${n.node_id}`);
  if (!entry || !alive(entry.pid)) return;
  if (signal === 'SIGKILL') {
    process.kill(entry.pid, 'SIGKILL');
    await waitFor(`agent of ${n.node_id} gone`, 5_000, async () => (alive(entry.pid) ? undefined : true), 50);
  } else await stopProcess(entry.pid);
}
