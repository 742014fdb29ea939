import { describeOutcome, findExecutable, runCommand } from '../exec.js';
import type { AgentCommands } from '../runtime.js';

/**
 * Which WireGuard makes the node's tunnels: the kernel module (`ip link add …
 * type wireguard`) or `wireguard-go`, a userspace implementation that makes a
 * TUN device and answers the same UAPI socket `wg` talks to. Containers (LXC,
 * OpenVZ, Kubernetes pods) and many VPS kernels have no module; there only the
 * userspace one works.
 */
export const WIREGUARD_IMPLEMENTATIONS = ['auto', 'kernel', 'userspace'] as const;
export type WireguardSetting = (typeof WIREGUARD_IMPLEMENTATIONS)[number];
export type WireguardKind = Exclude<WireguardSetting, 'auto'>;

/** What a probe found for one implementation: usable or not, and why, in words for a failed step and `--doctor`. */
export interface Availability {
  kind: WireguardKind;
  available: boolean;
  detail: string;
}

/** The implementation an agent uses, or why it has none. */
export type Resolution = { kind: WireguardKind; detail: string } | { kind: null; detail: string };

/** A name no desired state uses (15 characters at most, the kernel's limit), made and deleted at once. */
const PROBE_DEVICE = 'dn42wgprobe';

/**
 * Kernel WireGuard works when `ip link add … type wireguard` does: the probe
 * device is deleted again at once. A probe device left over by a killed agent
 * is deleted first.
 */
export async function probeKernel(commands: AgentCommands): Promise<Availability> {
  const ip = commands.ip;
  await runCommand([...ip, 'link', 'del', 'dev', PROBE_DEVICE], 10_000);
  const argv = [...ip, 'link', 'add', 'dev', PROBE_DEVICE, 'type', 'wireguard'];
  const outcome = await runCommand(argv, 10_000);
  if (outcome.code !== 0) return { kind: 'kernel', available: false, detail: `kernel module missing or not allowed (${describeOutcome(argv, outcome)})` };
  await runCommand([...ip, 'link', 'del', 'dev', PROBE_DEVICE], 10_000);
  return { kind: 'kernel', available: true, detail: '`ip link add … type wireguard` works' };
}

/** `wireguard-go` is there when its program is executable; `--version` names the build. */
export async function probeUserspace(commands: AgentCommands): Promise<Availability> {
  const program = commands.wireguard_go[0];
  const found = findExecutable(program);
  if (!found)
    return { kind: 'userspace', available: false, detail: `${program} not found or not executable (install wireguard-go, or set command.wireguard_go)` };
  const version = await runCommand([...commands.wireguard_go, '--version'], 10_000);
  const line = /wireguard-go v\S+/.exec(version.stdout)?.[0] ?? 'version unknown';
  return { kind: 'userspace', available: true, detail: `${found} (${line})` };
}

/**
 * The implementation for a setting: `kernel` and `userspace` as asked when
 * available, `auto` the kernel when it works and `wireguard-go` otherwise. An
 * unavailable choice resolves to `{kind: null}` with every reason.
 */
export async function resolveImplementation(setting: WireguardSetting, commands: AgentCommands): Promise<Resolution> {
  if (setting === 'kernel') {
    const kernel = await probeKernel(commands);
    return kernel.available ? { kind: 'kernel', detail: kernel.detail } : { kind: null, detail: `wireguard_implementation = kernel: ${kernel.detail}` };
  }
  if (setting === 'userspace') {
    const user = await probeUserspace(commands);
    return user.available ? { kind: 'userspace', detail: user.detail } : { kind: null, detail: `wireguard_implementation = userspace: ${user.detail}` };
  }
  const kernel = await probeKernel(commands);
  if (kernel.available) return { kind: 'kernel', detail: kernel.detail };
  const user = await probeUserspace(commands);
  if (user.available) return { kind: 'userspace', detail: `${user.detail}; the kernel has none: ${kernel.detail}` };
  return { kind: null, detail: `no WireGuard implementation: kernel: ${kernel.detail}; userspace: ${user.detail}` };
}
