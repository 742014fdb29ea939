import { mkdir, readdir, readFile, rename, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describeOutcome, runCommand } from '../exec.js';
import { currentLink, versionDir, versionsDir } from './layout.js';
import { readReportedVersion } from './marker.js';
import { records, type InstallResult } from './records.js';

/** Everything the installer needs, written by the agent as a JSON file before it starts the installer. */
export interface InstallPlan {
  prefix: string;
  version: string;
  /** The version `current` pointed at when the agent decided to update. */
  previous: string;
  /** Directory of the downloaded, verified release files. */
  staging: string;
  files: string[];
  stateDir: string;
  /** Restarts the agent unit (`systemctl restart dn42-agent`). */
  restart: string[];
  gateTimeoutMs: number;
}

/**
 * Installs a verified release, in the separate short-lived unit: unpack into
 * `versions/<v>`, point `current` at it, restart the agent, then the health
 * gate: wait until an agent process of version `<v>` had a report accepted
 * (its marker, written after its first accepted runtime snapshot, newer than
 * the restart). On timeout `current` goes back to the previous version, the
 * agent is restarted again and the new version is removed. The outcome is
 * written for the next agent start to report; a failure is remembered so the
 * periodic check does not loop on it.
 */
export async function install(plan: InstallPlan, say: (line: string) => void = () => {}, now = () => new Date()): Promise<InstallResult> {
  const outcome = (status: InstallResult['status'], detail: string | null): InstallResult => ({
    version: plan.version,
    previous: plan.previous,
    status,
    detail,
    at: now().toISOString(),
  });
  let result: InstallResult;
  try {
    await unpack(plan);
    say(`unpacked ${plan.version} into ${versionDir(plan.prefix, plan.version)}`);
    await pointCurrentAt(plan.prefix, plan.version);
    if (await restartAndWait(plan, say, now)) {
      result = outcome('installed', null);
      await prune(plan);
      await settle(plan, result);
    } else {
      result = await restore(plan, say, outcome);
    }
  } catch (err) {
    result = outcome('failed', `install of ${plan.version} failed: ${(err as Error).message}`.slice(0, 2000));
    await settle(plan, result);
  }
  say(`${result.status}: ${result.detail ?? plan.version}`);
  return result;
}

/**
 * Leaves the outcome for the agent (written before any restart that follows,
 * so the restarted agent finds it at its start), remembers a failure, and
 * cleans up the staging files and the "installing" record.
 */
async function settle(plan: InstallPlan, result: InstallResult): Promise<void> {
  if (result.status !== 'installed')
    await records.failure.write(plan.stateDir, { version: plan.version, reason: result.detail ?? result.status, at: result.at });
  await rm(plan.staging, { recursive: true, force: true });
  await records.result.write(plan.stateDir, result);
  await records.installing.clear(plan.stateDir);
}

/** Every tarball unpacked (npm layout: its top folder `package/` dropped) into `versions/<v>.partial`, then renamed into place. */
async function unpack(plan: InstallPlan): Promise<void> {
  const target = versionDir(plan.prefix, plan.version);
  const partial = `${target}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  try {
    for (const name of plan.files) {
      const argv = ['tar', '-xzf', join(plan.staging, name), '-C', partial, '--strip-components=1', '--no-same-owner'];
      const r = await runCommand(argv, 120_000);
      if (r.code !== 0) throw new Error(describeOutcome(argv, r));
    }
    const stamped = (await readFile(join(partial, 'VERSION'), 'utf8').catch(() => '')).trim();
    if (stamped !== plan.version) throw new Error(`release ${plan.version} carries VERSION ${JSON.stringify(stamped)}`);
  } catch (err) {
    await rm(partial, { recursive: true, force: true });
    throw err;
  }
  await rm(target, { recursive: true, force: true });
  await rename(partial, target);
}

/** Atomic switch: a new relative symlink renamed over `current`. */
export async function pointCurrentAt(prefix: string, version: string): Promise<void> {
  const next = `${currentLink(prefix)}.next`;
  await rm(next, { force: true });
  await symlink(join('versions', version), next);
  await rename(next, currentLink(prefix));
}

async function restartAndWait(plan: InstallPlan, say: (line: string) => void, now: () => Date): Promise<boolean> {
  const since = now().getTime();
  await restart(plan, say);
  const until = Date.now() + plan.gateTimeoutMs;
  while (Date.now() < until) {
    const marker = await readReportedVersion(plan.stateDir);
    if (marker?.version === plan.version && Date.parse(marker.at) >= since) return true;
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

async function restart(plan: InstallPlan, say: (line: string) => void): Promise<void> {
  const r = await runCommand(plan.restart, 120_000);
  if (r.code !== 0) say(`restart: ${describeOutcome(plan.restart, r)}`);
}

async function restore(
  plan: InstallPlan,
  say: (line: string) => void,
  outcome: (s: InstallResult['status'], d: string) => InstallResult,
): Promise<InstallResult> {
  const detail = `health gate: version ${plan.version} did not report within ${Math.round(plan.gateTimeoutMs / 1000)} s; restored ${plan.previous}`;
  say(detail);
  await pointCurrentAt(plan.prefix, plan.previous);
  await rm(versionDir(plan.prefix, plan.version), { recursive: true, force: true });
  const result = outcome('restored', detail);
  await settle(plan, result);
  await restart(plan, say);
  return result;
}

/** Keeps the new and the previous version (the next restore point); older ones go. */
async function prune(plan: InstallPlan): Promise<void> {
  const keep = new Set([plan.version, plan.previous]);
  for (const name of await readdir(versionsDir(plan.prefix))) if (!keep.has(name)) await rm(versionDir(plan.prefix, name), { recursive: true, force: true });
  await records.failure.clear(plan.stateDir);
}
