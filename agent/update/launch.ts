import { spawn } from 'node:child_process';
import { existsSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describeOutcome, runCommand } from '../exec.js';

/** How the installer is started apart from the agent. */
export type Launcher = 'systemd-run' | 'detached';

/** systemd when it is the init system (its runtime directory exists), else a detached process. */
export const defaultLauncher = (): Launcher => (existsSync('/run/systemd/system') ? 'systemd-run' : 'detached');

/**
 * The installer's argv: in a packed release the bundle's sibling
 * `dn42-agent-installer.mjs`; in a source checkout `installer-main.ts`
 * through tsx's loader.
 */
export function installerArgv(here = import.meta.url): string[] {
  const dir = dirname(fileURLToPath(here));
  if (here.endsWith('.mjs')) return [process.execPath, join(dir, 'dn42-agent-installer.mjs')];
  const tsxLoader = join(dirname(createRequire(here).resolve('tsx/package.json')), 'dist', 'loader.mjs');
  return [process.execPath, '--import', pathToFileURL(tsxLoader).href, join(dir, 'installer-main.ts')];
}

/**
 * Starts the installer so that it outlives the agent's restart: a transient
 * systemd unit `dn42-agent-update-<v>` (outside the agent's cgroup, which
 * `systemctl restart` would kill), or a detached process in its own session
 * writing to `logFile`. Resolves once it was started.
 */
export async function launchInstaller(launcher: Launcher, version: string, argv: string[], logFile: string): Promise<void> {
  if (launcher === 'systemd-run') {
    const unit = ['systemd-run', '--unit', `dn42-agent-update-${version}`, '--collect', '--quiet', '--', ...argv];
    const r = await runCommand(unit, 30_000);
    if (r.code !== 0) throw new Error(describeOutcome(unit, r));
    return;
  }
  const out = openSync(logFile, 'a');
  const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', out, out] });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  child.unref();
}
