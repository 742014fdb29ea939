import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { eventually } from './wait.js';

/** The project directory: where `cli/bin.mjs` and `agent/bin.mjs` are run from. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Started {
  child: ChildProcess;
  /** Everything written so far. */
  output(): { stdout: string; stderr: string };
  done: Promise<Run>;
}

/** A clean environment: only what the command needs, plus the variables of the test. */
export function cliEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...env };
}

/** Starts a `node <script> ...args` of the project (the real command line, as `npm start` runs it: the prebuilt bundle when fresh, else tsx). */
export function startScript(
  script: string,
  args: readonly string[],
  env: Record<string, string>,
  options: { cwd?: string; input?: string; timeoutMs?: number } = {},
): Started {
  const child = spawn(process.execPath, [`${ROOT}${script}`, ...args], { cwd: options.cwd ?? ROOT, env: cliEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin!.on('error', () => {});
  child.stdin!.end(options.input ?? '');
  const done = new Promise<Run>((resolve, reject) => {
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} ${args.join(' ')} did not finish; stderr: ${stderr}`));
    }, options.timeoutMs ?? 60_000);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return { child, output: () => ({ stdout, stderr }), done };
}

/** `dn42-control ...args` to its end. */
export function dn42Control(args: readonly string[], env: Record<string, string>, options: { cwd?: string; input?: string } = {}): Promise<Run> {
  return startScript('cli/bin.mjs', args, env, options).done;
}

/** `dn42-control serve` until the site and the three APIs answer; `stop()` sends SIGINT (a Ctrl-C) and waits. */
export async function serveUntilUp(
  env: Record<string, string>,
  ports: { control: number; identity: number; registry: number; site: number },
  timeoutMs = 90_000,
): Promise<Started & { stop(signal?: NodeJS.Signals): Promise<Run> }> {
  const started = startScript('cli/bin.mjs', ['serve'], env, { timeoutMs: 300_000 });
  let exited = false;
  void started.done.then(
    () => (exited = true),
    () => (exited = true),
  );
  const answers = (port: number, path: string) =>
    fetch(`http://127.0.0.1:${port}${path}`).then(
      (r) => r.status === 200,
      () => false,
    );
  const up = await eventually(
    async () => {
      if (exited) return 'exited';
      return (
        (await answers(ports.site, '/')) &&
        (await answers(ports.control, '/healthz')) &&
        (await answers(ports.identity, '/healthz')) &&
        (await answers(ports.registry, '/healthz')) &&
        'up'
      );
    },
    { what: 'dn42-control serve to answer on every service', timeoutMs, everyMs: 200 },
  ).catch((err: unknown) => {
    started.child.kill('SIGKILL');
    throw err;
  });
  if (up === 'exited') throw new Error(`serve exited early: ${started.output().stderr}\n${started.output().stdout}`);
  return {
    ...started,
    async stop(signal: NodeJS.Signals = 'SIGINT') {
      if (!exited) started.child.kill(signal);
      return started.done;
    },
  };
}
