import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { safeComment } from '../text.js';
import { communityFunctions } from './communities.js';
import { PROTOCOL } from '../../../domain/desired-state/bird-names.js';
import { roaImportCheck, roaTables } from './rpki.js';
import { FAMILIES, channelOf, indent, prefixSet, prefixesOf, type Family } from './syntax.js';

/**
 * `bird/filters.conf`: the sets and functions every filter of the node uses,
 * followed by the named filters of the eBGP sessions (`ebgp.ts`).
 * Filters call boolean functions (`if !dn42_import_ok_v4() then reject;`)
 * rather than functions that accept or reject themselves, so each protocol's
 * filter reads top to bottom.
 *
 * eBGP import keeps what a dn42 peer may announce (the registry's prefix
 * filters), drops our own prefixes, the exact `blocked_prefixes` (flap
 * mitigations: exact match, more-specifics pass) and AS paths longer than
 * `DN42_AS_PATH_MAX`, and, when `bird.rpki.mode` is `reject_invalid`, ROA-invalid
 * routes (`rpki.ts`).
 */

export const AS_PATH_MAX = 64;

const upper = (f: Family) => f.toUpperCase();
/** Names of the sets, per family. */
export const SET = {
  dn42: (f: Family) => `DN42_IMPORT_${upper(f)}`,
  own: (f: Family) => `OWN_NETS_${upper(f)}`,
  blocked: (f: Family) => `BLOCKED_${upper(f)}`,
};
/** Names of the functions, per family. */
export const FN = {
  importOk: (f: Family) => `dn42_import_ok_${f}`,
  exportOk: (f: Family) => `dn42_export_ok_${f}`,
  localPref: (f: Family) => `dn42_route_local_pref_${f}`,
  ibgpExportOk: (f: Family) => `dn42_ibgp_export_ok_${f}`,
  ospfExportOk: (f: Family) => `dn42_ospf_export_ok_${f}`,
  kernelExportOk: (f: Family) => `dn42_kernel_export_ok_${f}`,
  coldPotato: 'dn42_cold_potato',
};

/** What the filters of one node need to know about it. */
export interface FilterFacts {
  /** `import_prefixes` of the document: BIRD patterns, written as given. */
  dn42: Record<Family, string[]>;
  own: Record<Family, string[]>;
  blocked: Record<Family, string[]>;
  localPref: Record<Family, { prefix: string; local_pref: number }[]>;
  coldPotato: boolean;
}

export function filterFacts(state: DesiredState): FilterFacts {
  const per = <T>(make: (f: Family) => T) => ({ v4: make('v4'), v6: make('v6') });
  const node = state.node;
  return {
    dn42: per((f) => [...state.bird.import_prefixes[channelOf(f)]]),
    own: per((f) => prefixesOf(f, f === 'v4' ? node.ipv4_prefixes : node.ipv6_prefixes)),
    blocked: per((f) => prefixesOf(f, state.bird.blocked_prefixes)),
    localPref: per((f) =>
      state.bird.route_local_pref.map((r) => ({ prefix: prefixesOf(f, [r.prefix])[0], local_pref: r.local_pref })).filter((r) => r.prefix !== undefined),
    ),
    coldPotato: node.region !== null && state.bird.cold_potato_med !== null,
  };
}

/** The node's constants, first in `bird/filters.conf`, which `bird.conf` includes before anything else. */
export function constants(state: DesiredState): string[] {
  const node = state.node;
  return [
    `define OWN_AS = ${node.asn};`,
    ...(node.loopback_ipv4 === null ? [] : [`define OWN_IPV4 = ${node.loopback_ipv4};`]),
    ...(node.loopback_ipv6 === null ? [] : [`define OWN_IPV6 = ${node.loopback_ipv6};`]),
    ...(node.region === null ? [] : [`define OWN_REGION = ${node.region};`]),
    '',
  ];
}

const fn = (name: string, body: string[]) => [`function ${name}() {`, ...indent(body), '}', ''];

function sets(state: DesiredState, facts: FilterFacts): string[] {
  const lines = ['# Prefixes dn42 peers may announce (dn42 registry filter.txt / filter6.txt).'];
  for (const f of FAMILIES) if (facts.dn42[f].length > 0) lines.push(`define ${SET.dn42(f)} = ${prefixSet(facts.dn42[f])};`);
  const defineSets = (comment: string, name: (f: Family) => string, members: (f: Family) => string[]) => {
    const defined = FAMILIES.filter((f) => members(f).length > 0).map((f) => `define ${name(f)} = ${prefixSet(members(f))};`);
    if (defined.length > 0) lines.push(comment, ...defined);
  };
  defineSets('# Our own prefixes: originated here, never accepted from a peer.', SET.own, (f) => facts.own[f].map((p) => `${p}+`));
  defineSets('# blocked_prefixes: rejected on eBGP import, exact match only.', SET.blocked, (f) => facts.blocked[f]);
  lines.push(`define DN42_AS_PATH_MAX = ${AS_PATH_MAX};`);
  if (facts.coldPotato) lines.push(`define COLD_POTATO_MED = ${state.bird.cold_potato_med};`);
  return [...lines, ''];
}

/** `if !(net ~ DN42_IMPORT_V4) then return false;`, or a plain `return false;` when the document allows no prefix. */
const inDn42 = (f: Family, facts: FilterFacts) => (facts.dn42[f].length > 0 ? `if !(net ~ ${SET.dn42(f)}) then return false;` : 'return false;');

function familyFunctions(state: DesiredState, f: Family, facts: FilterFacts): string[] {
  const own = facts.own[f].length > 0;
  const importChecks = [
    inDn42(f, facts),
    ...(own ? [`if net ~ ${SET.own(f)} then return false;`] : []),
    ...(facts.blocked[f].length > 0 ? [`if net ~ ${SET.blocked(f)} then return false;`] : []),
    'if bgp_path.len > DN42_AS_PATH_MAX then return false;',
    ...roaImportCheck(state, f),
    'return true;',
  ];
  const lines = [
    `# eBGP import (${channelOf(f)}): dn42 space, not ours, not blocked, a sane AS path${roaImportCheck(state, f).length ? ', not ROA-invalid' : ''}.`,
    ...fn(FN.importOk(f), importChecks),
    `# eBGP export (${channelOf(f)}): dn42 space, our own prefixes and what BGP taught us.`,
    ...fn(FN.exportOk(f), [inDn42(f, facts), 'if source = RTS_BGP then return true;', `return proto = "${PROTOCOL.own(f)}";`]),
    `# iBGP export (${channelOf(f)}): our own prefixes and BGP routes; hosts and links travel in OSPF.`,
    ...fn(FN.ibgpExportOk(f), [`return source = RTS_BGP || proto = "${PROTOCOL.own(f)}";`]),
    `# OSPF export (${channelOf(f)}): loopback and host routes inside our own prefixes.`,
    ...fn(
      FN.ospfExportOk(f),
      own ? [`if !(net ~ ${SET.own(f)}) then return false;`, `return source = RTS_DEVICE || proto = "${PROTOCOL.hosts(f)}";`] : ['return false;'],
    ),
    `# Kernel export (${channelOf(f)}): everything but interface routes and the unreachable origination routes.`,
    ...fn(FN.kernelExportOk(f), ['if source = RTS_DEVICE then return false;', `return proto != "${PROTOCOL.own(f)}";`]),
  ];
  if (facts.localPref[f].length > 0) {
    const rules = facts.localPref[f].map((r) => `if net ~ [ ${r.prefix}+ ] then { bgp_local_pref = ${r.local_pref}; return true; }`);
    lines.push(
      `# route_local_pref (${channelOf(f)}): the first prefix that holds the route sets its local preference.`,
      ...fn(FN.localPref(f), [...rules, 'return false;']),
    );
  }
  return lines;
}

function coldPotatoFunction(): string[] {
  return [
    '# Cold potato: a route whose origin region (64511, 41..57) is not ours gets COLD_POTATO_MED added,',
    '# so the fleet prefers to hand traffic over in the region it is heading for.',
    ...fn(FN.coldPotato, [
      'if !(bgp_community ~ [(64511, 41..57)]) then return false;',
      'if (64511, OWN_REGION) ~ bgp_community then return false;',
      'if defined(bgp_med) then bgp_med = bgp_med + COLD_POTATO_MED; else bgp_med = COLD_POTATO_MED;',
      'return true;',
    ]),
  ];
}

/** The text of `bird/filters.conf`; `sessionFilters` are the named filters of the eBGP sessions. */
export function filtersConf(state: DesiredState, facts: FilterFacts, sessionFilters: string[]): string {
  const lines = [
    `# dn42-agent: constants, sets, functions and eBGP filters of node ${safeComment(state.node.node_id)}, rendered; included by bird.conf.`,
    ...constants(state),
    ...sets(state, facts),
    ...roaTables(state),
    ...communityFunctions(),
    '',
    ...FAMILIES.flatMap((f) => familyFunctions(state, f, facts)),
    ...(facts.coldPotato ? coldPotatoFunction() : []),
    ...sessionFilters,
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}
