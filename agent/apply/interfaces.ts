import type { DesiredState } from '../../domain/desired-state/schema.js';
import { describeOutcome, runCommand } from '../exec.js';
import { interfacePlan, type IpCommand } from '../render/index.js';
import type { ApplyTarget, StepResult } from './types.js';

/** `['address', 'replace', A, ..., 'dev', D]` as `A dev D`, the key an address removal needs. */
function addressOf(command: IpCommand): { address: string; dev: string } | null {
  if (command[0] !== 'address' || command[1] !== 'replace') return null;
  const dev = command[command.indexOf('dev') + 1];
  return dev ? { address: command[2], dev } : null;
}

/**
 * What leaves the node with the new state: WireGuard devices no longer listed
 * are deleted (their addresses go with them), addresses no longer listed on a
 * kept device are removed. The render knows only the new state, so this diff
 * against the previous one is the apply's.
 */
export function removalCommands(state: DesiredState, previous: DesiredState | null): IpCommand[] {
  if (!previous) return [];
  const devices = new Set(state.interfaces.map((i) => i.name));
  const gone = previous.interfaces.map((i) => i.name).filter((name) => !devices.has(name));
  const wanted = new Set(interfacePlan(state).map(addressOf).filter((a) => a !== null).map((a) => `${a.address} ${a.dev}`));
  const stale = interfacePlan(previous)
    .map(addressOf)
    .filter((a): a is { address: string; dev: string } => a !== null && !gone.includes(a.dev) && !wanted.has(`${a.address} ${a.dev}`));
  return [...gone.map((dev) => ['link', 'del', 'dev', dev]), ...stale.map((a) => ['address', 'del', a.address, 'dev', a.dev])];
}

async function deviceExists(target: ApplyTarget, dev: string): Promise<boolean> {
  return (await runCommand([...target.commands.ip, 'link', 'show', 'dev', dev], 10_000)).code === 0;
}

/**
 * `ip` for every interface: removals first, then the render's plan in order.
 * `link add` is skipped for a device that exists (the plan's other commands
 * are idempotent). The first failing command fails the step.
 */
export async function applyInterfaces(target: ApplyTarget, state: DesiredState, previous: DesiredState | null): Promise<StepResult> {
  const commands = [...removalCommands(state, previous), ...interfacePlan(state)];
  if (commands.length === 0) return { name: 'interfaces', status: 'skipped', detail: 'no interfaces or addresses' };
  let ran = 0;
  for (const command of commands) {
    if (command[0] === 'link' && command[1] === 'add' && (await deviceExists(target, command[3]))) continue;
    const argv = [...target.commands.ip, ...command];
    const outcome = await runCommand(argv, 30_000);
    if (outcome.code !== 0) return { name: 'interfaces', status: 'failed', detail: describeOutcome(argv, outcome) };
    ran++;
  }
  return { name: 'interfaces', status: 'ok', detail: `${ran} ip commands` };
}
