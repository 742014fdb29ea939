import { readFile } from 'node:fs/promises';
import { install, type InstallPlan } from './installer.js';

/**
 * Entry of the installer unit: `node dn42-agent-installer.mjs <plan.json>`.
 * Runs apart from the agent (systemd-run, or a detached process), so the
 * agent's restart does not end it. Prints one line per step (journal of the
 * transient unit); exits 0 when the new version is in force, 1 otherwise.
 */
const planPath = process.argv[2];
if (!planPath) {
  process.stderr.write('usage: dn42-agent-installer <plan.json>\n');
  process.exit(2);
}
const plan = JSON.parse(await readFile(planPath, 'utf8')) as InstallPlan;
const say = (line: string) => process.stdout.write(`${new Date().toISOString()} dn42-agent-update ${plan.version}: ${line}\n`);
const result = await install(plan, say);
process.exit(result.status === 'installed' ? 0 : 1);
