import { renderBird } from './bird/index.js';
import { renderDns } from './dns/index.js';
import { renderInterfacePlans } from './interface-plan.js';
import type { RenderedFile, RenderInputs } from './types.js';
import { renderWireguard } from './wireguard.js';

/**
 * The renderers: pure functions from a validated desired state to the files
 * WireGuard, `ip`, BIRD 2 and BIND 9 read. No clock, no randomness, no file
 * access: the same inputs give the same bytes, which is what makes a plan
 * (`--plan-only`) a diff of files and a snapshot test meaningful.
 */

export type { RenderedFile, RenderInputs } from './types.js';
export { RenderError } from './types.js';
export { generateWireguardPrivateKey, wireguardPublicKey } from './keys.js';
export { interfacePlan, type IpCommand } from './interface-plan.js';
export { presharedKeyRefs, presharedKeyPath, readPresharedKeys } from './preshared-keys.js';
export { bgpProtocolName } from '../../domain/desired-state/bird-names.js';
export { dnsServiceWanted } from './dns/index.js';
export { rpkiModeOf } from './bird/rpki.js';
export { BIRD_FILES } from './bird/index.js';

/** Every file of the node, sorted by path. */
export function renderAll(inputs: RenderInputs): RenderedFile[] {
  const files = [...renderWireguard(inputs), ...renderInterfacePlans(inputs.state), ...renderBird(inputs), ...renderDns(inputs)];
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
