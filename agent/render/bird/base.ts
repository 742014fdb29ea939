import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { safeComment } from '../text.js';
import { regionCommunity } from './communities.js';
import { FN, type FilterFacts } from './filters.js';
import { PROTOCOL } from '../../../domain/desired-state/bird-names.js';
import { FAMILIES, block, channelOf, type Family } from './syntax.js';

/**
 * The head of `bird/bird.conf`: identity and the protocols every node runs: `device` (interface scan), `direct` (the
 * addresses on `lo`, so loopbacks reach OSPF), `kernel` per family (optional)
 * and the `own_v4`/`own_v6` statics that originate the node's prefixes.
 */

export function header(state: DesiredState): string[] {
  const node = state.node;
  return [
    `# dn42-agent: BIRD 2 configuration of node ${safeComment(node.node_id)} (AS${node.asn}), rendered; the next apply overwrites it.`,
    `router id ${node.router_id};`,
    '',
  ];
}

export function deviceAndDirect(): string[] {
  return [
    ...block(`protocol device ${PROTOCOL.device}`, ['scan time 10;']),
    '',
    '# The addresses on lo (loopbacks, anycast): OSPF exports those inside our own prefixes.',
    ...block(`protocol direct ${PROTOCOL.direct}`, ['ipv4;', 'ipv6;', 'interface "lo";']),
    '',
  ];
}

function kernel(f: Family, state: DesiredState): string[] {
  const source = f === 'v4' ? state.node.loopback_ipv4 : state.node.loopback_ipv6;
  const exportFilter = [`if !${FN.kernelExportOk(f)}() then reject;`, ...(source === null ? [] : [`krt_prefsrc = OWN_IP${f.toUpperCase()};`]), 'accept;'];
  return [
    ...block(`protocol kernel ${PROTOCOL.kernel(f)}`, [
      'scan time 20;',
      ...block(channelOf(f), ['import none;', ...block('export filter', exportFilter, '};')], '};'),
    ]),
    '',
  ];
}

export function kernels(state: DesiredState, enabled: boolean): string[] {
  if (!enabled) return ['# No kernel protocol: this BIRD does not program the kernel routing tables.', ''];
  return FAMILIES.flatMap((f) => kernel(f, state));
}

/** One static per family with the node's prefixes as unreachable routes, stamped with the region community. */
export function originations(state: DesiredState, facts: FilterFacts): string[] {
  return FAMILIES.flatMap((f) => {
    if (facts.own[f].length === 0) return [];
    const stamp = state.node.region === null ? ['accept;'] : [`bgp_community.add(${regionCommunity(state.node.region)});`, 'accept;'];
    return [
      `# Our ${channelOf(f)} prefixes: originated here (unreachable beyond the more specific routes we hold).`,
      ...block(`protocol static ${PROTOCOL.own(f)}`, [
        ...block(channelOf(f), [...block('import filter', stamp, '};'), 'export none;'], '};'),
        ...facts.own[f].map((p) => `route ${p} unreachable;`),
      ]),
      '',
    ];
  });
}
