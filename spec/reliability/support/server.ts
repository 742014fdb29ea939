import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { eventually } from '../../support/wait.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The real `dn42-control` command line as a child of the spec (never signalled by group or name). */
export interface CliProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves at `'close'` with the exit code and signal. */
  closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function runCli(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, ['cli/bin.mjs', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, closed };
}

/** `serve control` (and any further `roles`) on `port`, resolved once `/control/v1/healthz` answers. */
export async function serveControl(port: number, env: Record<string, string>, roles: string[] = []): Promise<CliProcess> {
  const p = runCli(['serve', 'control', ...roles], { ...env, CONTROL_PORT: String(port) });
  await eventually(
    async () => {
      if (p.child.exitCode !== null) throw new Error(`serve control exited: ${p.output()}`);
      return (await fetch(`http://127.0.0.1:${port}/control/v1/healthz`).catch(() => undefined))?.status === 200;
    },
    { what: 'serve control to answer', timeoutMs: 60_000, everyMs: 100 },
  );
  return p;
}
