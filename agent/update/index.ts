import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { compareVersions, isVersion } from '../../domain/release/rules.js';
import type { AgentRuntime } from '../runtime.js';
import { downloadRelease, ReleaseFileMismatch } from './download.js';
import type { InstallPlan } from './installer.js';
import { currentVersion, DEFAULT_PREFIX, stagingDir } from './layout.js';
import { defaultLauncher, installerArgv, launchInstaller, type Launcher } from './launch.js';
import { fetchManifest, type Manifest } from './manifest.js';
import { updateDir } from './marker.js';
import { records } from './records.js';
import { reportUpdateProblem, settleInstallResult } from './report.js';

export interface UpdateOptions {
  /** Install prefix (`<prefix>/versions`, `<prefix>/current`). */
  prefix: string;
  launcher: Launcher;
  /** Restarts the agent after the switch. */
  restart: string[];
  /** How long the health gate waits for the new version to report. */
  gateTimeoutMs: number;
  /** The installer's argv (before the plan file). */
  installer: string[];
}

/**
 * Defaults for a systemd node. Hosts without systemd (and end-to-end tests)
 * override them through the environment: `DN42_AGENT_PREFIX`,
 * `DN42_AGENT_RESTART` (a JSON argv array) and `DN42_AGENT_UPDATE_GATE_SECONDS`.
 */
export function defaultUpdateOptions(rt: AgentRuntime, env: NodeJS.ProcessEnv = process.env): UpdateOptions {
  const restart = env.DN42_AGENT_RESTART ? (JSON.parse(env.DN42_AGENT_RESTART) as unknown) : null;
  const gateSeconds = Number(env.DN42_AGENT_UPDATE_GATE_SECONDS);
  return {
    prefix: env.DN42_AGENT_PREFIX || DEFAULT_PREFIX,
    launcher: defaultLauncher(),
    restart: Array.isArray(restart) && restart.every((a) => typeof a === 'string') ? restart : [...rt.commands.systemctl, 'restart', 'dn42-agent'],
    gateTimeoutMs: gateSeconds > 0 ? gateSeconds * 1000 : 180_000,
    installer: installerArgv(),
  };
}

/** An installer that has not finished after this long is taken for dead. */
const INSTALL_STALE_MS = 15 * 60_000;
let running: Promise<void> | null = null;

/**
 * Self-update (document 2, Versioning): on `agent_update_available` (`offer`)
 * or a periodic check, fetch the target's manifest; only a strictly newer
 * version is taken; every file is downloaded and checked against the
 * manifest's sha256 (a mismatch discards the release and is reported); then
 * the installer starts in its own short-lived unit, switches `current`,
 * restarts the agent and runs the health gate (agent/update/installer.ts).
 * First reports what an earlier installer run left. One check at a time;
 * a version that failed is retried only on a new offer. Never rejects.
 */
export function checkForUpdate(
  rt: AgentRuntime,
  offer?: { version: string; wheels: unknown[]; reason?: string },
  options: Partial<UpdateOptions> = {},
): Promise<void> {
  if (running) return running;
  running = update(rt, offer, { ...defaultUpdateOptions(rt), ...options })
    .catch((err) => rt.logger.warn({ err }, 'agent update check failed'))
    .finally(() => {
      running = null;
    });
  return running;
}

async function update(rt: AgentRuntime, offer: { version: string } | undefined, opts: UpdateOptions): Promise<void> {
  await settleInstallResult(rt);
  const manifest = await fetchManifest(rt);
  if (!manifest || !(await wanted(rt, manifest, offer !== undefined, opts))) return;
  const staging = stagingDir(opts.prefix, manifest.version);
  try {
    await downloadRelease(rt, manifest, staging);
  } catch (err) {
    if (!(err instanceof ReleaseFileMismatch)) throw err;
    await records.failure.write(rt.stateDir, { version: manifest.version, reason: err.message, at: new Date().toISOString() });
    return reportUpdateProblem(rt, manifest.version, `discarded: ${err.message}`);
  }
  await startInstaller(rt, manifest, staging, opts);
}

/** Whether to install `manifest`: newer than this agent, an installation to update, no installer running, not a known failure (unless offered again). */
async function wanted(rt: AgentRuntime, manifest: Manifest, offered: boolean, opts: UpdateOptions): Promise<boolean> {
  if (!isVersion(rt.version) || compareVersions(manifest.version, rt.version) <= 0) return false;
  if ((await currentVersion(opts.prefix)) === null) {
    rt.logger.info(
      { prefix: opts.prefix, version: manifest.version },
      'agent update available, but this agent is not installed under the prefix; not updating',
    );
    return false;
  }
  const installing = await records.installing.read(rt.stateDir);
  if (installing && Date.now() - Date.parse(installing.at) < INSTALL_STALE_MS) return false;
  const failed = await records.failure.read(rt.stateDir);
  return offered || failed?.version !== manifest.version;
}

async function startInstaller(rt: AgentRuntime, manifest: Manifest, staging: string, opts: UpdateOptions): Promise<void> {
  const previous = (await currentVersion(opts.prefix))!;
  const plan: InstallPlan = {
    prefix: opts.prefix,
    version: manifest.version,
    previous,
    staging,
    files: manifest.wheels.map((w) => w.filename),
    stateDir: rt.stateDir,
    restart: opts.restart,
    gateTimeoutMs: opts.gateTimeoutMs,
  };
  const dir = updateDir(rt.stateDir);
  await mkdir(dir, { recursive: true });
  const planPath = join(dir, `plan-${manifest.version}.json`);
  await writeFile(planPath, JSON.stringify(plan, null, 2));
  await records.installing.write(rt.stateDir, { version: manifest.version, at: new Date().toISOString() });
  rt.logger.info({ version: manifest.version, previous }, `installing agent ${manifest.version} (${opts.launcher})`);
  await launchInstaller(opts.launcher, manifest.version, [...opts.installer, planPath], join(dir, `installer-${manifest.version}.log`)).catch(async (err) => {
    await records.installing.clear(rt.stateDir);
    throw err;
  });
}
