import { randomBytes } from 'node:crypto';
import { runCommand, type CommandOutcome } from '../../../agent/exec.js';
import { addressesOf, type KernelAddress } from '../../../agent/apply/ip-addresses.js';

/**
 * A named network namespace (`ip netns add`) for the agent's `ip` steps: the
 * agent runs its real commands with `command.ip = ip -n <name>` and
 * `command.wg = ip netns exec <name> wg`, so addresses and devices change in
 * the namespace and never on the test host. Needs root (CI runs as root).
 */
export interface NetNs {
  name: string;
  /** `ip -n <name>` as an argv prefix (the agent's `command.ip`). */
  ipArgv: string[];
  /** `ip netns exec <name> wg` (the agent's `command.wg`). */
  wgArgv: string[];
  ip(...args: string[]): Promise<CommandOutcome>;
  /** `ip -j address show dev <dev>` in the namespace. */
  addresses(dev: string): Promise<KernelAddress[]>;
  /** Whether the device exists in the namespace. */
  hasDevice(dev: string): Promise<boolean>;
  remove(): Promise<void>;
}

/** Creates a namespace with `lo` up, or answers why it cannot (then the spec skips). */
export async function createNetns(): Promise<NetNs | { unavailable: string }> {
  const name = `dn42t-${process.pid}-${randomBytes(3).toString('hex')}`;
  const added = await runCommand(['ip', 'netns', 'add', name]);
  if (added.code !== 0) return { unavailable: `ip netns add failed (not root, or no network namespaces): ${(added.error ?? added.stderr).trim()}` };
  const ipArgv = ['ip', '-n', name];
  const ip = (...args: string[]) => runCommand([...ipArgv, ...args]);
  await ip('link', 'set', 'dev', 'lo', 'up');
  return {
    name,
    ipArgv,
    wgArgv: ['ip', 'netns', 'exec', name, 'wg'],
    ip,
    addresses: (dev) => addressesOf(ipArgv, dev),
    hasDevice: async (dev) => (await ip('link', 'show', 'dev', dev)).code === 0,
    async remove() {
      await runCommand(['ip', 'netns', 'del', name]);
    },
  };
}

/** Whether `ip link add <dev> type <kind>` works in the namespace (the kernel has the driver); the probe device is removed again. */
export async function supportsLinkKind(ns: NetNs, kind: string): Promise<boolean> {
  const probe = `probe${randomBytes(2).toString('hex')}`;
  const made = await ns.ip('link', 'add', 'dev', probe, 'type', kind);
  if (made.code === 0) await ns.ip('link', 'del', 'dev', probe);
  return made.code === 0;
}
