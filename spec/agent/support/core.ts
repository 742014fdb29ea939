import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../../../agent/exec.js';
import { spawnBird } from './bird-process.js';

/** The agent's source-tree entry, run as the real program (`node agent/bin.mjs`). */
export const AGENT_BIN = new URL('../../../agent/bin.mjs', import.meta.url).pathname;

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `dn42-agent <args>` to its exit; `umask` (octal text, `077` as in the systemd unit) through a shell. */
export function runAgent(args: string[], timeoutMs = 30_000, options: { umask?: string } = {}): Promise<AgentRun> {
  return new Promise((resolve, reject) => {
    const argv = [process.execPath, AGENT_BIN, ...args];
    const child =
      options.umask === undefined
        ? spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] })
        : spawn('sh', ['-c', `umask ${options.umask} && exec "$@"`, 'sh', ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    // Bound of the run: a hanging agent fails the spec instead of hanging it.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`dn42-agent ${args.join(' ')} did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    // 'close', not 'exit': only then has all of its output been read.
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A long-running `dn42-agent` (the daemon) with its output collected. */
export interface AgentProcess {
  child: ChildProcess;
  stderr(): string;
  /** Log lines (pino JSON) parsed from stderr; a line still being written (no newline yet) is left out. */
  logs(): { msg: string; level: number; [k: string]: unknown }[];
  /** Resolves with the exit code once the process has ended and all of its output is read. */
  exit(): Promise<number | null>;
  /** Sends `signal` (unless it has ended) and resolves as `exit()`. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function spawnAgent(args: string[]): AgentProcess {
  const child = spawn(process.execPath, [AGENT_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => (stderr += d));
  child.stdout!.resume();
  // 'close' comes after 'exit' once stdout and stderr are drained: a line logged just before the exit is in `logs()`.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    stderr: () => stderr,
    logs: () =>
      stderr
        .split('\n')
        .slice(0, -1)
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l)),
    exit: () => exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000); // an agent that ignores the signal is killed
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

export async function tempDir(prefix = 'dn42-agent-core-'): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/** A real BIRD 2 daemon in the foreground with its own control socket, started on a bootstrap configuration (no kernel protocol). */
export interface Bird {
  socket: string;
  /** `birdc -s <socket> <args>` output. */
  birdc(...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

/** uid and gid of the `bird` user Debian's bird2 package creates, if this machine has it. */
function birdUser(): { uid: number; gid: number } | null {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('bird:'));
  if (!line) return null;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Where Debian's bird2 is installed, BIRD runs as in its unit: `-u bird -g
 * bird`, so it reads the agent's rendered files as the `bird` user, as on a
 * node (a state dir it cannot pass through fails the apply). `dir` is made
 * passable (0711) for that, the socket lives in a `run/` owned by bird.
 */
export async function startBird(dir: string): Promise<Bird> {
  const conf = join(dir, 'bootstrap.conf');
  const user = birdUser();
  const run = join(dir, 'run');
  await mkdir(run, { recursive: true });
  if (user) {
    await chmod(dir, 0o711);
    await chown(run, user.uid, user.gid);
  }
  await writeFile(conf, 'router id 10.255.255.1;\nprotocol device {}\n');
  const daemon = await spawnBird(conf, join(run, 'bird.ctl'), user ? ['-u', 'bird', '-g', 'bird'] : []);
  return {
    socket: daemon.socket,
    async birdc(...args) {
      const outcome = await runCommand(['birdc', '-s', daemon.socket, ...args]);
      return outcome.stdout + outcome.stderr;
    },
    stop: daemon.stop,
  };
}

/** An agent configuration file in `key = value` form. */
export async function writeAgentConfig(path: string, settings: Record<string, string | number | boolean>): Promise<string> {
  await writeFile(
    path,
    `# dn42-agent test configuration\n${Object.entries(settings)
      .map(([k, v]) => `${k} = ${v}`)
      .join('\n')}\n`,
  );
  return path;
}

/** A desired state that passes the shared schema; sessions to plain IPv4 neighbours, no loopbacks (nothing for `ip` to do on the test host). */
export function desiredState(nodeId = 'fra1', overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    node: { node_id: nodeId, asn: 4242420001, router_id: '172.20.0.1', ipv4_prefixes: ['172.20.0.0/27'], ipv6_prefixes: ['fd42:4242:1::/48'] },
    interfaces: [],
    bgp_sessions: [{ name: 'dn42_peer_a', remote_asn: 4242420002, neighbor: '172.20.53.1', address_family: 'ipv4' }],
    bird: { internal_topology: { routers: [], hosts: [] } },
    dns: null,
    ...overrides,
  };
}

/** A WireGuard interface for the desired state (IP endpoint, a valid peer key). */
export const wireguardInterface = (name: string, port: number) => ({
  name,
  listen_port: port,
  addresses: [{ address: 'fe80::1/64', peer: 'fe80::2/128' }],
  peer: { public_key: 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=', endpoint: '192.0.2.10:51820' },
});
