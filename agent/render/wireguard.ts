import type { InterfaceState } from '../../domain/desired-state/schema.js';
import { parseIp } from '../../domain/net/ip.js';
import { decodeWireguardKey } from './keys.js';
import { presharedKeyFor } from './preshared-keys.js';
import { RenderError, SECRET_MODE, type RenderedFile, type RenderInputs } from './types.js';
import { safeComment } from './text.js';

/**
 * One `wg setconf` file per WireGuard interface (`wireguard/<name>.conf`, mode
 * 0600: it holds the private key). `wg setconf` knows only the keys below;
 * addresses and MTU go through `ip` (see `interface-plan.ts`). An interface
 * whose peer has no public key yet (an internal peer whose agent has not
 * reported its key) comes up without a `[Peer]` section.
 */

export { interfacePlan, type IpCommand } from './interface-plan.js';

/** The private key every interface uses: a node has one key pair (`private_key_ref: node`). */
function checkedPrivateKey(key: string): string {
  try {
    decodeWireguardKey(key);
  } catch {
    throw new RenderError('invalid WireGuard private key: expected 32 bytes in base64');
  }
  return key.trim();
}

/** An allowed IP with its length: `wg` reads a bare address as a host route anyway, the file says so. */
const withLength = (ip: string): string => (ip.includes('/') ? ip : `${ip}/${parseIp(ip)?.kind() === 'ipv4' ? 32 : 128}`);

function peerSection(iface: InterfaceState, presharedKeys: Readonly<Record<string, string>>): string[] {
  const peer = iface.peer;
  if (peer.public_key === null) return ['', '# No peer: its public key is not known yet.'];
  const lines = ['', '[Peer]', `PublicKey = ${peer.public_key}`];
  if (peer.preshared_key_ref !== null) lines.push(`PresharedKey = ${presharedKeyFor(peer.preshared_key_ref, presharedKeys, iface.name)}`);
  if (peer.endpoint !== null) lines.push(`Endpoint = ${peer.endpoint}`);
  if (peer.allowed_ips.length > 0) lines.push(`AllowedIPs = ${peer.allowed_ips.map(withLength).join(', ')}`);
  if (peer.persistent_keepalive_seconds !== null) lines.push(`PersistentKeepalive = ${peer.persistent_keepalive_seconds}`);
  return lines;
}

/** The `wg setconf` text of one interface. */
export function wireguardConfig(iface: InterfaceState, nodeId: string, privateKey: string, presharedKeys: Readonly<Record<string, string>> = {}): string {
  const lines = [
    `# dn42-agent: WireGuard interface ${iface.name} of node ${safeComment(nodeId)} (wg setconf format), rendered; the next apply overwrites it.`,
    '[Interface]',
    `PrivateKey = ${checkedPrivateKey(privateKey)}`,
  ];
  if (iface.listen_port !== null) lines.push(`ListenPort = ${iface.listen_port}`);
  return [...lines, ...peerSection(iface, presharedKeys), ''].join('\n');
}

export function renderWireguard(inputs: RenderInputs): RenderedFile[] {
  return inputs.state.interfaces.map((iface) => ({
    path: `wireguard/${iface.name}.conf`,
    content: wireguardConfig(iface, inputs.state.node.node_id, inputs.wireguardPrivateKey, inputs.presharedKeys),
    mode: SECRET_MODE,
  }));
}
