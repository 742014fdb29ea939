import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AgentSettings } from './cli.js';
import { findExecutable } from './exec.js';
import { callControl, detailOf } from './http.js';
import { readEnrollment } from './state/enrollment.js';
import { stateLayout } from './state/layout.js';
import { probeKernel, probeUserspace } from './wireguard/implementation.js';

/** One line of `--doctor`. `skip` does not fail the run. */
export interface Check {
  status: 'ok' | 'FAIL' | 'skip';
  name: string;
  detail: string;
}

const ok = (name: string, detail: string): Check => ({ status: 'ok', name, detail });
const fail = (name: string, detail: string): Check => ({ status: 'FAIL', name, detail });
const skip = (name: string, detail: string): Check => ({ status: 'skip', name, detail });

function binaryChecks(settings: AgentSettings): Check[] {
  return (['bird', 'birdc', 'wg', 'ip'] as const).map((name) => {
    const program = settings.commands[name][0];
    const found = findExecutable(program);
    return found ? ok(`binary ${name}`, found) : fail(`binary ${name}`, `${program} not found or not executable`);
  });
}

/**
 * Which WireGuard implementations work here and why, and the one the setting
 * picks: `auto` fails only when neither works, `kernel` and `userspace` when
 * theirs does not. An unavailable one that is not needed is a `skip`.
 */
export async function wireguardChecks(settings: AgentSettings): Promise<Check[]> {
  const [kernel, userspace] = await Promise.all([probeKernel(settings.commands), probeUserspace(settings.commands)]);
  const setting = settings.wireguardImplementation;
  const line = (a: typeof kernel): Check => {
    const name = `wireguard ${a.kind}`;
    if (a.available) return ok(name, a.detail);
    return setting === a.kind ? fail(name, a.detail) : skip(name, `not available: ${a.detail}`);
  };
  const chosen =
    setting === 'auto' ? (kernel.available ? kernel : userspace.available ? userspace : null) : [kernel, userspace].find((a) => a.kind === setting)!;
  const use =
    chosen && chosen.available
      ? ok(
          'wireguard implementation',
          `${setting === 'auto' ? 'auto: ' : ''}${chosen.kind}${setting === 'auto' && chosen.kind === 'userspace' ? ' (no kernel module)' : ''}`,
        )
      : fail('wireguard implementation', setting === 'auto' ? 'auto: neither the kernel module nor wireguard-go is available' : `${setting} is not available`);
  return [line(kernel), line(userspace), use];
}

/**
 * The state dir holds the agent token: it must be the agent's alone (no group
 * or other write, token files 0600), yet passable by others when the rendered
 * files live inside it (BIRD and BIND read them as their own users).
 */
async function stateDirChecks(settings: AgentSettings): Promise<Check[]> {
  const dir = settings.stateDir;
  const info = await stat(dir).catch(() => null);
  if (!info) {
    const parentWritable = await access(dirname(dir), constants.W_OK).then(
      () => true,
      () => false,
    );
    return [parentWritable ? ok('state dir', `${dir} absent; created at the first run`) : fail('state dir', `${dir} absent and ${dirname(dir)} not writable`)];
  }
  if (!info.isDirectory()) return [fail('state dir', `${dir} is not a directory`)];
  const checks: Check[] = [];
  const writable = await access(dir, constants.W_OK).then(
    () => true,
    () => false,
  );
  const mode = (info.mode & 0o777).toString(8);
  const rendersInside = settings.renderedDir === null || settings.renderedDir.startsWith(`${dir}/`);
  if (!writable) checks.push(fail('state dir', `${dir} not writable`));
  else if (info.mode & 0o022) checks.push(fail('state dir', `${dir} is writable by group or others (mode ${mode})`));
  else if (rendersInside && !(info.mode & 0o001))
    checks.push(fail('state dir', `${dir} mode ${mode}: BIRD and BIND (running as their own users) cannot reach the rendered files; expected 711`));
  else checks.push(ok('state dir', `${dir} mode ${mode}`));
  const layout = stateLayout(dir);
  for (const [name, path] of [
    ['agent token file', layout.token],
    ['enrollment file', layout.enrollment],
  ] as const) {
    const file = await stat(path).catch(() => null);
    if (!file) checks.push(skip(name, `${path} absent (not enrolled yet)`));
    else if (file.mode & 0o077) checks.push(fail(name, `${path} mode ${(file.mode & 0o777).toString(8)}, expected 600`));
    else checks.push(ok(name, `${path} mode 600`));
  }
  return checks;
}

/** `GET /control/v1/healthz` answers without credentials; `GET /agent/recovery-public-key` needs a valid agent token and changes nothing. */
async function controllerChecks(settings: AgentSettings): Promise<Check[]> {
  const base = settings.controllerUrl;
  if (!base) return [skip('controller', 'no --controller-url'), skip('agent token', 'no --controller-url')];
  const checks: Check[] = [];
  try {
    const health = await callControl(base, 'GET', '/healthz');
    checks.push(health.status === 200 ? ok('controller', `${base} reachable`) : fail('controller', `${base}/healthz: ${detailOf(health)}`));
  } catch (err) {
    return [fail('controller', `${base} unreachable: ${(err as Error).cause ?? (err as Error).message}`), skip('agent token', 'controller unreachable')];
  }
  const enrollment = await readEnrollment(stateLayout(settings.stateDir)).catch(() => null);
  if (!enrollment) {
    checks.push(skip('agent token', 'not enrolled yet'));
    return checks;
  }
  const answer = await callControl(base, 'GET', '/agent/recovery-public-key', undefined, enrollment.token).catch((err: Error) => ({
    status: 0,
    body: err.message,
  }));
  checks.push(answer.status === 200 ? ok('agent token', `valid for node ${enrollment.node_id}`) : fail('agent token', `refused: ${detailOf(answer)}`));
  return checks;
}

/** Runs every check; one line each on `print`; 0 when none failed, else 1. */
export async function runDoctor(settings: AgentSettings, print: (line: string) => void): Promise<number> {
  const checks = [...binaryChecks(settings), ...(await wireguardChecks(settings)), ...(await stateDirChecks(settings)), ...(await controllerChecks(settings))];
  for (const c of checks) print(`${c.status.padEnd(4)} ${c.name}: ${c.detail}\n`);
  return checks.some((c) => c.status === 'FAIL') ? 1 : 0;
}
