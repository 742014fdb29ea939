import { join } from 'node:path';
import type { DesiredState } from '../../domain/desired-state/schema.js';
import { describeOutcome, runCommand } from '../exec.js';
import { RENDERED, type ApplyTarget, type StepResult } from './types.js';

/** `wg setconf <iface> <rendered>/wireguard/<iface>.conf` for each interface; the first failure fails the step. */
export async function applyWireguard(target: ApplyTarget, state: DesiredState): Promise<StepResult> {
  if (state.interfaces.length === 0) return { name: 'wireguard', status: 'skipped', detail: 'no interfaces' };
  for (const iface of state.interfaces) {
    const result = await applyWireguardInterface(target, iface.name);
    if (result.status === 'failed') return result;
  }
  return { name: 'wireguard', status: 'ok', detail: `${state.interfaces.length} interfaces` };
}

/** `wg setconf` of one interface from its rendered file. */
export async function applyWireguardInterface(target: ApplyTarget, iface: string): Promise<StepResult> {
  const argv = [...target.commands.wg, 'setconf', iface, join(target.renderedDir, RENDERED.wireguard(iface))];
  const outcome = await runCommand(argv, 30_000);
  if (outcome.code !== 0) return { name: 'wireguard', status: 'failed', detail: describeOutcome(argv, outcome) };
  return { name: 'wireguard', status: 'ok', detail: `1 interface` };
}

const birdFile = (target: ApplyTarget) => target.birdConfig ?? join(target.renderedDir, RENDERED.bird);

/**
 * `birdc configure [check] "<file>"`: BIRD parses the file and, unless checking,
 * switches to it. Success is the exit code 0 and BIRD's own words
 * (`Configuration OK`, `Reconfigured`, `Reconfiguration in progress`, or a
 * queued reconfiguration); anything else, a parse error included, fails the
 * step and BIRD keeps the configuration it runs.
 */
export async function configureBird(target: ApplyTarget, check: boolean): Promise<StepResult> {
  const name = check ? 'bird-check' : 'bird';
  const argv = [...target.commands.birdc, 'configure', ...(check ? ['check'] : []), `"${birdFile(target)}"`];
  const outcome = await runCommand(argv, 120_000);
  const accepted = check ? /Configuration OK/ : /Reconfigured|Reconfiguration in progress|queueing new config/;
  if (outcome.code === 0 && accepted.test(outcome.stdout)) return { name, status: 'ok', detail: outcome.stdout.trim().split('\n').pop() ?? null };
  return { name, status: 'failed', detail: describeOutcome(argv, outcome) };
}

/** `rndc reload` when the node serves DNS; skipped when its desired state has no `dns`. */
export async function reloadDns(target: ApplyTarget, state: DesiredState): Promise<StepResult> {
  if (state.dns === null) return { name: 'dns', status: 'skipped', detail: 'no dns group' };
  const argv = [...target.commands.rndc, 'reload'];
  const outcome = await runCommand(argv, 60_000);
  if (outcome.code === 0) return { name: 'dns', status: 'ok', detail: outcome.stdout.trim() || null };
  return { name: 'dns', status: 'failed', detail: describeOutcome(argv, outcome) };
}
