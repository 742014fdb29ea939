import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { safeComment } from '../text.js';
import { PROTOCOL } from '../../../domain/desired-state/bird-names.js';
import { FAMILIES, block, channelOf, familyOfPrefix, network, type Family } from './syntax.js';

/**
 * Hosts of `internal_topology`: machines behind this node without BIRD. Each
 * address becomes a static route over the host's interface (`hosts_v4`,
 * `hosts_v6`), which the kernel gets and OSPF spreads through the fleet.
 */

function hostsStatic(state: DesiredState, f: Family): string[] {
  const routes = state.bird.internal_topology.hosts.flatMap((h) =>
    h.addresses
      .map(network)
      .filter((p) => familyOfPrefix(p) === f)
      .map((p) => `route ${p} via "${h.interface}"; # ${safeComment(h.name)}`),
  );
  if (routes.length === 0) return [];
  return [...block(`protocol static ${PROTOCOL.hosts(f)}`, [`${channelOf(f)};`, ...routes]), ''];
}

export const hostStatics = (state: DesiredState): string[] => FAMILIES.flatMap((f) => hostsStatic(state, f));
