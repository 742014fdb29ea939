import type { DesiredState, InterfaceState } from '../../domain/desired-state/schema.js';
import { describeOutcome, runCommand } from '../exec.js';
import { interfacePlan, type IpCommand } from '../render/index.js';
import { wireguardInterfaceCommands } from '../render/interface-plan.js';
import { applyWireguardInterface } from './services.js';
import { addressPresent, addressesOf, type DeviceAddress } from './ip-addresses.js';
import type { ApplyTarget, StepResult } from './types.js';

/** `['address', 'replace', A, ('peer', P)?, 'dev', D]` as `{address, peer, dev}`, what a removal needs. */
function addressOf(command: IpCommand): DeviceAddress | null {
  if (command[0] !== 'address' || command[1] !== 'replace') return null;
  const dev = command[command.indexOf('dev') + 1];
  const peer = command[3] === 'peer' ? command[4] : null;
  return dev ? { address: command[2], peer, dev } : null;
}

const keyOf = (a: DeviceAddress) => `${a.address} ${a.peer ?? ''} ${a.dev}`;

/**
 * What leaves the node with the new state: WireGuard devices no longer listed
 * are deleted (their addresses go with them), addresses no longer listed on a
 * kept device are removed. The render knows only the new state, so this diff
 * against the previous one is the apply's. A point-to-point address is removed
 * with its `peer`: the kernel keys it by both, and `address del A` alone finds nothing.
 */
export function removalCommands(state: DesiredState, previous: DesiredState | null): IpCommand[] {
  if (!previous) return [];
  const devices = new Set(state.interfaces.map((i) => i.name));
  const gone = previous.interfaces.map((i) => i.name).filter((name) => !devices.has(name));
  const wanted = new Set(
    interfacePlan(state)
      .map(addressOf)
      .filter((a) => a !== null)
      .map(keyOf),
  );
  const stale = interfacePlan(previous)
    .map(addressOf)
    .filter((a): a is DeviceAddress => a !== null && !gone.includes(a.dev) && !wanted.has(keyOf(a)));
  return [
    ...gone.map((dev) => ['link', 'del', 'dev', dev]),
    ...stale.map((a) => ['address', 'del', a.address, ...(a.peer === null ? [] : ['peer', a.peer]), 'dev', a.dev]),
  ];
}

async function deviceExists(target: ApplyTarget, dev: string): Promise<boolean> {
  return (await runCommand([...target.commands.ip, 'link', 'show', 'dev', dev], 10_000)).code === 0;
}

/**
 * Whether a command has nothing to do: `link add` of a device that exists (the
 * plan's other commands are idempotent by themselves), a removal of a device
 * or address that is not there. Removals must be idempotent because a restore
 * after a half-run step removes what the failed apply may never have created.
 */
async function alreadyDone(target: ApplyTarget, command: IpCommand): Promise<boolean> {
  const [object, verb] = command;
  if (object === 'link' && verb === 'add') return deviceExists(target, command[3]);
  if (object === 'link' && verb === 'del') return !(await deviceExists(target, command[3]));
  if (object === 'address' && verb === 'del') {
    const wanted = addressOf(['address', 'replace', ...command.slice(2)])!;
    return !addressPresent(await addressesOf(target.commands.ip, wanted.dev), wanted);
  }
  return false;
}

const isWireguardAdd = (command: IpCommand) => command[0] === 'link' && command[1] === 'add' && command.at(-1) === 'wireguard';

/**
 * `ip` for every interface: removals first, then the render's plan in order,
 * each command skipped when it has nothing to do. The first failing command
 * fails the step. With `target.devices`, WireGuard devices are made and
 * removed by it (the kernel module or a supervised `wireguard-go`) instead of
 * `ip link add/del`; a missing implementation fails the step with its reason.
 */
export async function applyInterfaces(target: ApplyTarget, state: DesiredState, previous: DesiredState | null): Promise<StepResult> {
  const commands = [...removalCommands(state, previous), ...interfacePlan(state)];
  if (commands.length === 0) return { name: 'interfaces', status: 'skipped', detail: 'no interfaces or addresses' };
  let ran = 0;
  const devices = target.devices;
  for (const command of commands) {
    if (devices && isWireguardAdd(command)) {
      const failed = await devices.create(command[3]);
      if (failed !== null) return { name: 'interfaces', status: 'failed', detail: failed };
      continue;
    }
    if (devices && command[0] === 'link' && command[1] === 'del') {
      const failed = await devices.remove(command[3]);
      if (failed !== null) return { name: 'interfaces', status: 'failed', detail: failed };
      continue;
    }
    if (await alreadyDone(target, command)) continue;
    const argv = [...target.commands.ip, ...command];
    const outcome = await runCommand(argv, 30_000);
    if (outcome.code !== 0) return { name: 'interfaces', status: 'failed', detail: describeOutcome(argv, outcome) };
    ran++;
  }
  const implementation = devices && state.interfaces.length > 0 ? `; WireGuard: ${devices.current() ?? 'none'}` : '';
  return { name: 'interfaces', status: 'ok', detail: `${ran} ip commands${implementation}` };
}

/**
 * One WireGuard device again, as applied: its MTU, addresses and `up`, then
 * `wg setconf` from its rendered file. For a device that came back bare (a
 * restarted `wireguard-go`); the other devices and BIRD are not touched, so no
 * other tunnel or session notices.
 */
export async function reapplyDevice(target: ApplyTarget, iface: InterfaceState): Promise<StepResult> {
  for (const command of wireguardInterfaceCommands(iface).filter((c) => !isWireguardAdd(c))) {
    const argv = [...target.commands.ip, ...command];
    const outcome = await runCommand(argv, 30_000);
    if (outcome.code !== 0) return { name: 'interfaces', status: 'failed', detail: describeOutcome(argv, outcome) };
  }
  return applyWireguardInterface(target, iface.name);
}
