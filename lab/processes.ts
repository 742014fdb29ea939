import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LabError, sleep } from './exec.js';
import { LAB_MARK, writeState, type LabProcess, type LabState } from './state.js';

/**
 * The lab's long-running processes: each started detached (its own process
 * group, so a Ctrl-C of `up` does not reach it and it outlives `up`), its
 * output in `logs/<name>.log`, its pid in lab.json. Stopping goes by that pid,
 * and only while the process's command line still carries `dn42lab` (a pid the
 * kernel gave to something else since is left alone).
 */

export interface SpawnOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export function spawnDetached(state: LabState, logs: string, name: string, argv: readonly string[], options: SpawnOptions = {}): LabProcess {
  if (!argv.join(' ').includes(LAB_MARK)) throw new LabError(`refusing to start ${name}: its command line does not carry ${LAB_MARK}`);
  const log = join(logs, `${name}.log`);
  const fd = openSync(log, 'a');
  try {
    const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', fd, fd], env: options.env ?? process.env, cwd: options.cwd });
    if (child.pid === undefined) throw new LabError(`cannot start ${name}: ${argv[0]} did not start`);
    child.unref();
    const entry = { name, pid: child.pid, log };
    state.processes = [...state.processes.filter((p) => p.name !== name), entry];
    writeState(state);
    return entry;
  } finally {
    closeSync(fd);
  }
}

/** The command line of `pid` (NUL-separated words joined by spaces), or null when it is gone. */
export function cmdlineOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return null;
  }
}

export const isLabProcess = (pid: number): boolean => (cmdlineOf(pid) ?? '').includes(LAB_MARK);

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return cmdlineOf(pid) !== null && !isZombie(pid);
  } catch {
    return false;
  }
}

function isZombie(pid: number): boolean {
  try {
    return / Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\)/, ''));
  } catch {
    return true;
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; answers once the process is gone. Only a process that carries the lab's mark. */
export async function stopProcess(pid: number, graceMs = 10_000): Promise<void> {
  if (!alive(pid) || !isLabProcess(pid)) return;
  signal(pid, 'SIGTERM');
  for (const until = Date.now() + graceMs; Date.now() < until; await sleep(100)) if (!alive(pid)) return;
  signal(pid, 'SIGKILL');
  for (const until = Date.now() + 5_000; Date.now() < until; await sleep(100)) if (!alive(pid)) return;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone meanwhile
  }
}

/** Our own pid and our ancestors': never stopped by the sweep, whatever their command lines say. */
function ownLineage(): Set<number> {
  const pids = new Set<number>();
  let pid = process.pid;
  while (pid > 1 && !pids.has(pid)) {
    pids.add(pid);
    try {
      pid = Number(
        readFileSync(`/proc/${pid}/stat`, 'utf8')
          .replace(/^.*\)\s+\S+\s+/, '')
          .split(' ')[0],
      );
    } catch {
      break;
    }
  }
  return pids;
}

/** Every process whose command line carries `mark` (the lab's state dir or its word), ourselves and our ancestors aside. */
export function markedProcesses(mark: string): { pid: number; cmdline: string }[] {
  const own = ownLineage();
  const found: { pid: number; cmdline: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (own.has(pid)) continue;
    const cmdline = cmdlineOf(pid);
    if (cmdline && cmdline.includes(mark) && !isZombie(pid)) found.push({ pid, cmdline });
  }
  return found;
}
