import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { Backoff, sleep } from '../backoff.js';
import { runCommand } from '../exec.js';

/**
 * One `wireguard-go` per interface, each a foreground child (`-f`) of the
 * agent. Its device lives as long as the process does, so the agent restarts it
 * with backoff when it dies, and tells its owner, which applies the interface
 * again (a new device has no addresses and no peers). The processes outlive the
 * agent on purpose (their own process group, output to a file, not a pipe):
 * routing does not depend on the agent, and the next agent adopts them from
 * their pid files instead of tearing a tunnel down.
 */

export interface SupervisorOptions {
  /** Argv prefix of `wireguard-go`; `-f <iface>` is appended. */
  command: readonly string[];
  /** Where `wireguard-go` puts its UAPI socket and `wg` looks for it (`/var/run/wireguard`, compiled into both). */
  socketDir: string;
  /** The agent's own files for the processes: `<iface>.json` (pid), `<iface>.log` (output). */
  stateDir: string;
  ip: readonly string[];
  log: Logger;
  /** Restart delays; default 1 s doubling to 30 s. */
  backoff?: { initialMs: number; maxMs: number; jitter: number };
  /** How long a new process may take to make its device and socket. */
  readyTimeoutMs?: number;
  /** Called after a process that died was started again and its device is back. */
  onRestarted?(iface: string): void;
}

/** What the runtime snapshot and the log say about one supervised interface. */
export interface ProcessReport {
  pid: number | null;
  /** Restarts since this agent started. */
  restarts: number;
  /** How the last process ended (`killed by SIGKILL`, `exited with code 1`), null when none ended. */
  last_exit: string | null;
  last_exit_at: string | null;
}

interface PidFile {
  pid: number;
  /** Clock ticks after boot (`/proc/<pid>/stat` field 22): a reused pid has another. */
  start_time: string;
  iface: string;
}

interface Watched {
  iface: string;
  /** False once the interface left the desired state: an exit is then the end. */
  wanted: boolean;
  pid: number | null;
  child: ChildProcess | null;
  /** Liveness poll of an adopted process (not our child: no exit event). */
  poll: NodeJS.Timeout | null;
  restartTimer: NodeJS.Timeout | null;
  startedAt: number;
  restarts: number;
  lastExit: string | null;
  lastExitAt: string | null;
  backoff: Backoff;
  exited: Promise<void>;
  markExited: () => void;
}

/** `/proc/<pid>/stat` field 22 (start time), or null when there is no such live process. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return null;
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

const cmdlineOf = (pid: number): string[] => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
};

/** Whether something answers on a UAPI socket (a stale file of a dead process refuses). */
function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const exitWords = (code: number | null, signal: NodeJS.Signals | null) =>
  signal ? `killed by ${signal}` : code === null ? 'ended (status unknown: adopted process)' : `exited with code ${code}`;

/** A process that lived this long had no start-up trouble: the next death starts the backoff again. */
const HEALTHY_MS = 60_000;
/** The output file is emptied at a start when it has grown past this. */
const LOG_LIMIT = 1024 * 1024;

export class WireguardGoSupervisor {
  private readonly watched = new Map<string, Watched>();
  private closed = false;

  constructor(private readonly o: SupervisorOptions) {}

  socketPath(iface: string): string {
    return join(this.o.socketDir, `${iface}.sock`);
  }

  private pidPath = (iface: string) => join(this.o.stateDir, `${iface}.json`);
  private logPath = (iface: string) => join(this.o.stateDir, `${iface}.log`);

  /** Interfaces with a process this agent watches. */
  interfaces(): string[] {
    return [...this.watched.values()].filter((w) => w.wanted).map((w) => w.iface);
  }

  report(iface: string): ProcessReport | null {
    const w = this.watched.get(iface);
    return w ? { pid: w.pid, restarts: w.restarts, last_exit: w.lastExit, last_exit_at: w.lastExitAt } : null;
  }

  /**
   * A live `wireguard-go` for `iface` with its device: the one watched, else one
   * adopted from its pid file, else a new one. A failure (no program, a process
   * that dies at once, no device in time) comes back as words, never thrown.
   */
  async ensure(iface: string): Promise<{ ok: true; started: boolean } | { ok: false; detail: string }> {
    const current = this.watched.get(iface);
    if (current?.wanted && current.pid !== null && startTimeOf(current.pid) !== null) return { ok: true, started: false };
    if (current?.wanted && current.restartTimer) {
      // Dead and waiting for its restart: start it now, the apply needs the device.
      clearTimeout(current.restartTimer);
      current.restartTimer = null;
    }
    if (!current && (await this.adopt(iface))) return { ok: true, started: false };
    const started = await this.start(iface, current ?? null);
    return started === null ? { ok: true, started: true } : { ok: false, detail: started };
  }

  /**
   * Takes over the process a previous agent started for `iface`, when its pid
   * file (in this agent's own state dir) names a live process of this
   * interface: the same pid with the same start time, so a reused pid is not
   * taken for it. Its death is noticed by polling (it is not our child).
   */
  async adopt(iface: string): Promise<boolean> {
    if (this.watched.has(iface)) return true;
    const file = await readFile(this.pidPath(iface), 'utf8')
      .then((t) => JSON.parse(t) as PidFile)
      .catch(() => null);
    if (!file || !Number.isSafeInteger(file.pid) || file.pid <= 0) return false;
    const alive = startTimeOf(file.pid) === file.start_time && cmdlineOf(file.pid).includes(iface);
    if (!alive) return false;
    const w = this.newWatched(iface, null);
    w.pid = file.pid;
    w.poll = setInterval(() => {
      if (startTimeOf(file.pid) !== file.start_time) this.exited(w, null, null);
    }, 1000);
    w.poll.unref();
    this.o.log.info({ interface: iface, pid: file.pid }, 'wireguard-go adopted');
    return true;
  }

  /** Ends the process of an interface that left the desired state (SIGTERM, SIGKILL after 5 s) and removes its socket and pid file. */
  async stop(iface: string): Promise<void> {
    if (!this.watched.has(iface)) await this.adopt(iface);
    const w = this.watched.get(iface);
    if (w) {
      w.wanted = false;
      if (w.restartTimer) clearTimeout(w.restartTimer);
      const pid = w.pid;
      if (pid !== null && startTimeOf(pid) !== null) {
        process.kill(pid, 'SIGTERM');
        const ended = await Promise.race([w.exited.then(() => true), sleep(5000).then(() => false)]);
        if (!ended && startTimeOf(pid) !== null) {
          process.kill(pid, 'SIGKILL');
          await Promise.race([w.exited, sleep(2000)]);
        }
      }
      this.forget(w);
      this.o.log.info({ interface: iface }, 'wireguard-go stopped');
    }
    await rm(this.pidPath(iface), { force: true });
    await this.removeStaleSocket(iface, true);
  }

  /** Stops watching (the agent is exiting); the processes go on running for the next agent. */
  close(): void {
    this.closed = true;
    for (const w of this.watched.values()) {
      if (w.poll) clearInterval(w.poll);
      if (w.restartTimer) clearTimeout(w.restartTimer);
      w.child?.removeAllListeners('exit');
    }
  }

  private newWatched(iface: string, previous: Watched | null): Watched {
    let markExited = () => {};
    const exited = new Promise<void>((resolve) => (markExited = resolve));
    const w: Watched = {
      iface,
      wanted: true,
      pid: null,
      child: null,
      poll: null,
      restartTimer: null,
      startedAt: Date.now(),
      restarts: previous?.restarts ?? 0,
      lastExit: previous?.lastExit ?? null,
      lastExitAt: previous?.lastExitAt ?? null,
      backoff: previous?.backoff ?? new Backoff(this.o.backoff ?? { initialMs: 1000, maxMs: 30_000, jitter: 0.25 }),
      exited,
      markExited,
    };
    this.watched.set(iface, w);
    return w;
  }

  private forget(w: Watched): void {
    if (w.poll) clearInterval(w.poll);
    if (w.restartTimer) clearTimeout(w.restartTimer);
    if (this.watched.get(w.iface) === w) this.watched.delete(w.iface);
  }

  /** A UAPI socket nobody answers on (its process was killed) is removed, else `wireguard-go` and `wg` trip over it. */
  private async removeStaleSocket(iface: string, always = false): Promise<void> {
    const path = this.socketPath(iface);
    if (!(await stat(path).catch(() => null))) return;
    if (!always && (await socketAnswers(path))) return;
    await rm(path, { force: true });
    this.o.log.info({ interface: iface, socket: path }, 'stale WireGuard UAPI socket removed');
  }

  private async deviceExists(iface: string): Promise<boolean> {
    return (await runCommand([...this.o.ip, 'link', 'show', 'dev', iface], 10_000)).code === 0;
  }

  /** Starts `wireguard-go -f <iface>` and waits for its device and socket; null on success, else why not. */
  private async start(iface: string, previous: Watched | null): Promise<string | null> {
    await mkdir(this.o.stateDir, { recursive: true, mode: 0o700 });
    await this.removeStaleSocket(iface);
    await this.awaitDeviceGone(iface);
    const logPath = this.logPath(iface);
    if (((await stat(logPath).catch(() => null))?.size ?? 0) > LOG_LIMIT) await truncate(logPath, 0);
    const out = openSync(logPath, 'a', 0o600);
    const argv = [...this.o.command, '-f', iface];
    let child: ChildProcess;
    try {
      child = spawn(argv[0], argv.slice(1), {
        detached: true,
        stdio: ['ignore', out, out],
        env: { ...process.env, LOG_LEVEL: 'error' },
      });
    } finally {
      closeSync(out);
    }
    const spawnError = new Promise<string>((resolve) => child.once('error', (err) => resolve(`${argv.join(' ')}: ${err.message}`)));
    child.unref();
    const w = this.newWatched(iface, previous);
    w.child = child;
    const early = new Promise<string>((resolve) =>
      child.once('exit', (code, signal) => {
        this.exited(w, code, signal);
        resolve(`${argv.join(' ')} ${exitWords(code, signal)}${this.lastLines(iface)}`);
      }),
    );
    w.pid = child.pid ?? null;
    const failure = await Promise.race([early, spawnError, this.waitReady(iface, this.o.readyTimeoutMs ?? 10_000)]);
    if (failure !== null) {
      if (w.pid !== null && startTimeOf(w.pid) !== null) process.kill(w.pid, 'SIGKILL');
      this.forget(w);
      w.wanted = false;
      return failure;
    }
    const file: PidFile = { pid: w.pid!, start_time: startTimeOf(w.pid!) ?? '', iface };
    await writeFile(this.pidPath(iface), `${JSON.stringify(file)}\n`, { mode: 0o600 });
    this.o.log.info({ interface: iface, pid: w.pid }, 'wireguard-go started');
    return null;
  }

  /**
   * The device of a process that just died lingers a moment while the kernel
   * tears its TUN down, and a new `wireguard-go` cannot make one of that name
   * meanwhile: wait for it to go, and delete it when it stays.
   */
  private async awaitDeviceGone(iface: string): Promise<void> {
    const until = Date.now() + 2000;
    while (await this.deviceExists(iface)) {
      if (Date.now() > until) {
        await runCommand([...this.o.ip, 'link', 'del', 'dev', iface], 10_000);
        return;
      }
      await sleep(50); // polling interval for the kernel's teardown
    }
  }

  /** Null once the device is there and the socket answers; words after `timeoutMs`. */
  private async waitReady(iface: string, timeoutMs: number): Promise<string | null> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if ((await socketAnswers(this.socketPath(iface))) && (await this.deviceExists(iface))) return null;
      await sleep(50); // polling interval for the device to appear
    }
    return `wireguard-go for ${iface}: no device and UAPI socket after ${timeoutMs} ms${this.lastLines(iface)}`;
  }

  private lastLines(iface: string): string {
    try {
      if (statSync(this.logPath(iface)).size === 0) return '';
      const lines = readFileSync(this.logPath(iface), 'utf8').trim().split('\n').slice(-3);
      return `: ${lines.join(' | ')}`;
    } catch {
      return '';
    }
  }

  /** A process ended: recorded, and restarted after the backoff delay while its interface is wanted. */
  private exited(w: Watched, code: number | null, signal: NodeJS.Signals | null): void {
    if (w.poll) clearInterval(w.poll);
    w.poll = null;
    w.markExited();
    if (this.watched.get(w.iface) !== w || w.pid === null) return;
    const words = exitWords(code, signal);
    w.lastExit = words;
    w.lastExitAt = new Date().toISOString();
    w.pid = null;
    if (!w.wanted || this.closed) return;
    if (Date.now() - w.startedAt > HEALTHY_MS) w.backoff.reset();
    const delay = w.backoff.next();
    this.o.log.warn({ interface: w.iface, exit: words, restart_in_ms: delay }, `wireguard-go for ${w.iface} ${words}; restarting`);
    w.restartTimer = setTimeout(() => void this.restart(w), delay);
  }

  private async restart(w: Watched): Promise<void> {
    w.restartTimer = null;
    if (!w.wanted || this.closed || this.watched.get(w.iface) !== w) return;
    const failure = await this.start(w.iface, w);
    const now = this.watched.get(w.iface);
    if (failure === null && now) {
      now.restarts++;
      this.o.log.warn({ interface: w.iface, restarts: now.restarts, pid: now.pid }, `wireguard-go for ${w.iface} restarted`);
      this.o.onRestarted?.(w.iface);
      return;
    }
    // Still failing: keep the record and try again later.
    this.o.log.error({ interface: w.iface, error: failure }, `wireguard-go for ${w.iface} did not start`);
    const again = this.newWatched(w.iface, w);
    again.pid = null;
    again.restartTimer = setTimeout(() => void this.restart(again), again.backoff.next());
  }
}
