import type { BgpSessionState, DesiredState } from '../../../domain/desired-state/schema.js';
import { isIpv6LinkLocal, parseIp } from '../../../domain/net/ip.js';
import { linkCommunityStatements } from './communities.js';
import { FN, type FilterFacts } from './filters.js';
import { bgpFilterName, bgpProtocolName } from '../../../domain/desired-state/bird-names.js';
import { block, channelOf, type Family } from './syntax.js';

/**
 * `bird/ebgp.conf`: one BGP protocol per session of the document (a disabled
 * session is not in the document, so it has no protocol). `mp-bgp` carries
 * both channels in one protocol, `ipv4`/`ipv6` one. A link-local neighbour is
 * written `fe80::x%iface` (or with an `interface` line when the name has a
 * `-` or `.`, which BIRD's lexer does not take after `%`); another neighbour
 * with an interface gets `interface`, a route collector without one is multihop (collectors sit
 * several hops away, behind their own tunnels).
 *
 * Peer sessions import through the dn42 checks, then set the link
 * communities, cold-potato MED, the session's `local_pref` and the first
 * matching `route_local_pref` (in that order, so the prefix rule wins).
 * Route collectors get everything we export and send us nothing. The filters
 * themselves are named and live in `bird/filters.conf` (`sessionFilters`).
 */

const familiesOf = (s: BgpSessionState): Family[] => (s.address_family === 'mp-bgp' ? ['v4', 'v6'] : [s.address_family === 'ipv4' ? 'v4' : 'v6']);

/** BIRD's lexer reads `fe80::2%wg0` but not `fe80::2%wg-a`: such interfaces go into an `interface` line. */
const ZONE_SAFE = /^[A-Za-z0-9_]+$/;

function neighborLines(s: BgpSessionState): string[] {
  const zone = s.interface !== null && ZONE_SAFE.test(s.interface) && isIpv6LinkLocal(parseIp(s.neighbor));
  const lines = [zone ? `neighbor ${s.neighbor}%${s.interface} as ${s.remote_asn};` : `neighbor ${s.neighbor} as ${s.remote_asn};`];
  if (!zone && s.interface !== null) lines.push(`interface "${s.interface}";`);
  if (s.policy === 'route_collector' && s.interface === null) lines.push('multihop;');
  if (s.source_address !== null) lines.push(`source address ${s.source_address};`);
  return lines;
}

function importFilter(s: BgpSessionState, f: Family, facts: FilterFacts): string[] {
  const lines = [`if !${FN.importOk(f)}() then reject;`, ...linkCommunityStatements(s)];
  if (facts.coldPotato) lines.push(`${FN.coldPotato}();`);
  if (s.local_pref !== null) lines.push(`bgp_local_pref = ${s.local_pref};`);
  if (facts.localPref[f].length > 0) lines.push(`${FN.localPref(f)}();`);
  return [...lines, 'accept;'];
}

function exportFilter(s: BgpSessionState, f: Family): string[] {
  return [`if !${FN.exportOk(f)}() then reject;`, ...(s.policy === 'route_collector' ? [] : linkCommunityStatements(s)), 'accept;'];
}

/**
 * The named filters of a session's channels, for `bird/filters.conf`. Named
 * rather than inline so that the exact filter a session runs can be tried on
 * routes of a static protocol (the spec does that with a real BIRD).
 */
export function sessionFilters(s: BgpSessionState, facts: FilterFacts): string[] {
  return familiesOf(s).flatMap((f) => [
    `# Session ${s.name} (${channelOf(f)}).`,
    ...(s.policy === 'route_collector' ? [] : [...block(`filter ${bgpFilterName(s, 'import', f)}`, importFilter(s, f, facts)), '']),
    ...block(`filter ${bgpFilterName(s, 'export', f)}`, exportFilter(s, f)),
    '',
  ]);
}

function channel(s: BgpSessionState, f: Family): string[] {
  const body: string[] = [];
  if (f === 'v4' && s.extended_next_hop) body.push('extended next hop on;');
  if (s.policy === 'route_collector') body.push('import none;');
  else body.push(`import filter ${bgpFilterName(s, 'import', f)};`, `import limit ${s.import_limit} action ${s.import_limit_action};`);
  body.push(`export filter ${bgpFilterName(s, 'export', f)};`);
  return block(channelOf(f), body, '};');
}

export function ebgpProtocol(s: BgpSessionState, facts: FilterFacts): string[] {
  const comment = `# Session ${s.name}: AS${s.remote_asn}, ${s.address_family}${s.policy === 'route_collector' ? ', route collector' : ''}.`;
  const body = [
    'local as OWN_AS;',
    ...neighborLines(s),
    ...(s.bfd ? ['bfd on;'] : []),
    ...(facts.coldPotato ? ['med metric on;'] : []),
    ...familiesOf(s).flatMap((f) => channel(s, f)),
  ];
  return [comment, ...block(`protocol bgp ${bgpProtocolName(s)}`, body), ''];
}

/** The text of `bird/ebgp.conf`. */
export function ebgpConf(state: DesiredState, facts: FilterFacts): string {
  const lines = state.bgp_sessions.length === 0 ? ['# No eBGP sessions.'] : state.bgp_sessions.flatMap((s) => ebgpProtocol(s, facts));
  return `${lines.join('\n').trimEnd()}\n`;
}

/** Whether any session asks for BFD, which needs a `protocol bfd`. */
export const needsBfd = (state: DesiredState): boolean => state.bgp_sessions.some((s) => s.bfd);
