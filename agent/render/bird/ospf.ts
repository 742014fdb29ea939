import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { safeComment } from '../text.js';
import { FN } from './filters.js';
import { PROTOCOL } from '../../../domain/desired-state/bird-names.js';
import { FAMILIES, block, channelOf, type Family } from './syntax.js';

/**
 * OSPFv2 (IPv4) and OSPFv3 (IPv6), area 0, over the internal WireGuard links of
 * `internal_topology.adjacencies`, each a point-to-point interface with its
 * cost. They carry the fleet's own addresses only (loopbacks, hosts, the links
 * themselves), so iBGP next hops resolve; dn42 routes travel in iBGP.
 * No adjacency, no OSPF.
 */

function ospf(state: DesiredState, f: Family): string[] {
  const interfaces = state.bird.internal_topology.adjacencies.flatMap((a) => [
    `# to ${safeComment(a.node_id)}`,
    ...block(`interface "${a.interface}"`, ['type ptp;', `cost ${a.cost};`], '};'),
  ]);
  return [
    ...block(`protocol ospf ${f === 'v4' ? 'v2' : 'v3'} ${PROTOCOL.ospf(f)}`, [
      ...block(channelOf(f), ['import all;', `export where ${FN.ospfExportOk(f)}();`], '};'),
      ...block('area 0', interfaces, '};'),
    ]),
    '',
  ];
}

export function ospfProtocols(state: DesiredState): string[] {
  return state.bird.internal_topology.adjacencies.length === 0 ? [] : FAMILIES.flatMap((f) => ospf(state, f));
}
