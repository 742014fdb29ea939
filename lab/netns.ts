import { randomBytes } from 'node:crypto';
import { attempt, LabError, run } from './exec.js';
import { HUB_NS, LAB_MARK, writeState, type LabState } from './state.js';

/**
 * The lab's "internet": a bridge in the hub namespace (`dn42lab-net`) and one
 * veth link from it to each node and peer namespace, addressed from the
 * benchmarking range 198.18.0.0/15. Nothing is routed off the machine: the
 * namespaces have no default route and the root namespace is not on the bridge.
 */

export const INTERNET_PREFIX_LENGTH = 24;
export const nodePublicIp = (index: number) => `198.18.0.${index}`;
export const peerPublicIp = (index: number) => `198.18.0.${100 + index}`;

/** Refuses (a `LabError` with the reason) where the lab cannot run: not root, no network namespaces, a tool missing. */
export async function checkHost(): Promise<void> {
  if (process.getuid?.() !== 0) throw new LabError('the lab needs root: it makes network namespaces (run it as root, e.g. sudo npm run lab -- up)');
  const probe = `${LAB_MARK}-probe-${randomBytes(2).toString('hex')}`;
  const added = await attempt(['ip', 'netns', 'add', probe]);
  if (added.code !== 0) throw new LabError(`network namespaces are unavailable here (ip netns add failed: ${(added.error ?? added.stderr).trim()})`);
  await attempt(['ip', 'netns', 'del', probe]);
  for (const tool of ['bird', 'birdc', 'wg', 'ssh-keygen']) {
    const found = await attempt(['sh', '-c', `command -v ${tool}`]);
    if (found.code !== 0) throw new LabError(`${tool} is not installed (apt-get install bird2 wireguard-tools openssh-client)`);
  }
}

/** Whether this kernel makes WireGuard devices (`ip link add type wireguard` in a scratch namespace). */
export async function kernelWireguard(): Promise<boolean> {
  const probe = `${LAB_MARK}-probe-${randomBytes(2).toString('hex')}`;
  await run(['ip', 'netns', 'add', probe]);
  try {
    return (await attempt(['ip', '-n', probe, 'link', 'add', 'wgprobe', 'type', 'wireguard'])).code === 0;
  } finally {
    await attempt(['ip', 'netns', 'del', probe]);
  }
}

export async function addNamespace(state: LabState, name: string): Promise<void> {
  if (!name.startsWith(`${LAB_MARK}-`)) throw new LabError(`namespace ${name} is not a lab namespace`);
  if ((await attempt(['ip', 'netns', 'add', name])).code !== 0) {
    // A leftover of an earlier lab: start it afresh.
    await attempt(['ip', 'netns', 'del', name]);
    await run(['ip', 'netns', 'add', name]);
  }
  state.namespaces = [...new Set([...state.namespaces, name])];
  writeState(state);
  await run(['ip', '-n', name, 'link', 'set', 'lo', 'up']);
}

export async function makeInternet(state: LabState): Promise<void> {
  await addNamespace(state, HUB_NS);
  await run(['ip', '-n', HUB_NS, 'link', 'add', 'br0', 'type', 'bridge']);
  await run(['ip', '-n', HUB_NS, 'link', 'set', 'br0', 'up']);
}

/** Joins `ns` to the bridge with `address` on its `eth0`; the hub side is `v-<short name>`. */
export async function attach(ns: string, address: string): Promise<void> {
  const hubSide = `v-${ns.slice(LAB_MARK.length + 1)}`.slice(0, 15);
  await run(['ip', '-n', HUB_NS, 'link', 'add', hubSide, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
  await run(['ip', '-n', HUB_NS, 'link', 'set', hubSide, 'master', 'br0', 'up']);
  await run(['ip', '-n', ns, 'address', 'add', `${address}/${INTERNET_PREFIX_LENGTH}`, 'dev', 'eth0']);
  await run(['ip', '-n', ns, 'link', 'set', 'eth0', 'up']);
}

/** A router forwards: IPv4 and IPv6 forwarding on in the namespace (a fresh namespace has both off, whatever the host says). */
export async function enableForwarding(ns: string): Promise<void> {
  await run(['ip', 'netns', 'exec', ns, 'sysctl', '-qw', 'net.ipv4.ip_forward=1', 'net.ipv6.conf.all.forwarding=1']);
}

/** `ip netns exec <ns>` with a private /run/wireguard (`wgDir` bind-mounted over it), then `argv`: wg and wireguard-go of one namespace see only its UAPI sockets. */
export function inNamespace(ns: string, wgDir: string, argv: readonly string[]): string[] {
  const quoted = argv.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return ['ip', 'netns', 'exec', ns, 'sh', '-c', `mkdir -p '${wgDir}' /run/wireguard && mount --bind '${wgDir}' /run/wireguard && exec ${quoted}`];
}

export async function listLabNamespaces(): Promise<string[]> {
  const out = await attempt(['ip', 'netns', 'list']);
  return out.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0])
    .filter((n) => n && n.startsWith(`${LAB_MARK}-`));
}

export async function removeNamespace(name: string): Promise<void> {
  if (!name.startsWith(`${LAB_MARK}-`)) return;
  await attempt(['ip', 'netns', 'del', name]);
}
