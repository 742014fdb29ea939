import type { DesiredState, Router } from '../../../domain/desired-state/schema.js';
import { safeComment } from '../text.js';
import { FN, type FilterFacts } from './filters.js';
import { ibgpProtocolName } from '../../../domain/desired-state/bird-names.js';
import { FAMILIES, block, channelOf, type Family } from './syntax.js';

/**
 * iBGP to every router of `internal_topology`, on loopbacks: one protocol per
 * family where both ends have a loopback of that family (a full mesh; each node
 * renders its side). `next hop self ebgp` makes the routes we learnt from eBGP
 * peers (whose next hops are link-local addresses of our tunnels) point at our
 * loopback, which OSPF makes reachable. What another router of the fleet sends
 * passed its eBGP filters already: imported as it comes.
 */

const loopbackOf = (r: Pick<Router, 'loopback_ipv4' | 'loopback_ipv6'>, f: Family) => (f === 'v4' ? r.loopback_ipv4 : r.loopback_ipv6);

function ibgpProtocol(state: DesiredState, router: Router, f: Family, facts: FilterFacts): string[] {
  const local = loopbackOf(state.node, f);
  const remote = loopbackOf(router, f);
  if (local === null || remote === null) return [];
  const body = [
    `local ${local} as OWN_AS;`,
    `neighbor ${remote} as ${router.asn};`,
    'multihop;',
    ...(facts.coldPotato ? ['med metric on;'] : []),
    ...block(channelOf(f), ['next hop self ebgp;', 'import all;', `export where ${FN.ibgpExportOk(f)}();`], '};'),
  ];
  return [
    `# iBGP (${channelOf(f)}) with ${safeComment(router.node_id)}, router id ${router.router_id}.`,
    ...block(`protocol bgp ${ibgpProtocolName(router, f)}`, body),
    '',
  ];
}

export function ibgpProtocols(state: DesiredState, facts: FilterFacts): string[] {
  return state.bird.internal_topology.routers.flatMap((r) => FAMILIES.flatMap((f) => ibgpProtocol(state, r, f, facts)));
}
