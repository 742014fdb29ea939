import { spawn } from 'node:child_process';

export interface CommandResult {
  /** Exit code; null when killed by a signal (timeout, abort). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs one external program (`argv[0]` with the rest as arguments, never
 * through a shell) and collects its output. Rejects only when the program
 * cannot be started (missing binary); a non-zero exit resolves, the caller
 * decides. Killed after `timeoutMs` so a hung `birdc` cannot stall telemetry.
 */
export function runCommand(argv: readonly string[], timeoutMs = 10_000, input?: string): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** stdout of a program that must succeed; otherwise an Error naming the program and its stderr. */
export async function outputOf(argv: readonly string[], timeoutMs?: number): Promise<string> {
  const r = await runCommand(argv, timeoutMs);
  if (r.code !== 0) throw new Error(`${argv.join(' ')} exited with ${r.code ?? 'a signal'}: ${r.stderr.trim().slice(0, 200)}`);
  return r.stdout;
}
