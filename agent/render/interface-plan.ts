import type { DesiredState, InterfaceState } from '../../domain/desired-state/schema.js';
import { parseIp } from '../../domain/net/ip.js';
import { PUBLIC_MODE, type RenderedFile } from './types.js';

/**
 * Addresses and MTU are no WireGuard settings (`wg setconf` refuses them), so
 * they travel as `ip` argument lists the apply step runs after the program
 * prefix (`runtime.commands.ip`). Every command but `link add` is idempotent
 * (`address replace`, `link set`), so a re-apply converges; `link add` fails
 * with `File exists` on an existing device, so the apply step skips it when the
 * device is there. Removing interfaces or addresses that left the document is
 * the apply step's job: it knows the previous state, a render does not.
 */

/** Arguments of one `ip` invocation, without the program itself: `['link', 'set', 'dev', 'wg0', 'up']`. */
export type IpCommand = string[];

/** The loopback device that holds the node's own addresses. */
export const LOOPBACK = 'lo';

/** `ip` commands that create and address one WireGuard interface. */
export function wireguardInterfaceCommands(iface: InterfaceState): IpCommand[] {
  const dev = iface.name;
  return [
    ['link', 'add', 'dev', dev, 'type', 'wireguard'],
    ['link', 'set', 'dev', dev, 'mtu', String(iface.mtu)],
    ...iface.addresses.map((a) => ['address', 'replace', a.address, ...(a.peer === null ? [] : ['peer', a.peer]), 'dev', dev]),
    ['link', 'set', 'dev', dev, 'up'],
  ];
}

/**
 * Addresses the node itself must hold on `lo`: the loopbacks (iBGP runs on them,
 * BIRD's `direct` protocol carries them into OSPF) and the DNS group's anycast
 * bind addresses (BIND can only listen on an address the node has).
 */
export function loopbackAddresses(state: DesiredState): string[] {
  const hosts = [state.node.loopback_ipv4, state.node.loopback_ipv6, ...(state.dns?.bind_addresses ?? [])].filter((a): a is string => a !== null);
  return [...new Set(hosts)].map((a) => `${a}/${parseIp(a)?.kind() === 'ipv4' ? 32 : 128}`);
}

export const loopbackCommands = (state: DesiredState): IpCommand[] => loopbackAddresses(state).map((a) => ['address', 'replace', a, 'dev', LOOPBACK]);

/** Every `ip` command of the node, in order: the loopback addresses, then each interface as listed. */
export function interfacePlan(state: DesiredState): IpCommand[] {
  return [...loopbackCommands(state), ...state.interfaces.flatMap(wireguardInterfaceCommands)];
}

/** Indented JSON with each argv list (an array of strings) on one line, so a diff shows whole commands. */
const planJson = (body: object): string =>
  `${JSON.stringify(body, null, 2).replace(/\[\s+("(?:[^"\\]|\\.)*"(?:,\s+"(?:[^"\\]|\\.)*")*)\s+\]/g, (_, items: string) => `[${items.replace(/,\s+/g, ', ')}]`)}\n`;

/** The same plan as files, one per device: `interfaces/<name>.json`. */
export function renderInterfacePlans(state: DesiredState): RenderedFile[] {
  const file = (name: string, body: object): RenderedFile => ({ path: `interfaces/${name}.json`, content: planJson(body), mode: PUBLIC_MODE });
  const files = state.interfaces.map((i) =>
    file(i.name, { interface: i.name, kind: i.kind, scope: i.scope, mtu: i.mtu, addresses: i.addresses, ip: wireguardInterfaceCommands(i) }),
  );
  const lo = loopbackCommands(state);
  if (lo.length > 0)
    files.push(
      file(LOOPBACK, { interface: LOOPBACK, kind: 'loopback', addresses: loopbackAddresses(state).map((address) => ({ address, peer: null })), ip: lo }),
    );
  return files;
}
