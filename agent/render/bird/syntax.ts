import { FAMILIES, type Family } from '../../../domain/desired-state/bird-names.js';
import { networkOf, parsePrefix } from '../../../domain/net/ip.js';

/**
 * Small pieces of BIRD 2 syntax. BIRD refuses a prefix with host bits set
 * (`172.20.0.1/24`) and has no empty set literal, so prefixes are canonical
 * and a set is only written when it has members.
 */

export { FAMILIES, type Family };
/** The BIRD channel (and table family) keyword of a family. */
export const channelOf = (f: Family): 'ipv4' | 'ipv6' => (f === 'v4' ? 'ipv4' : 'ipv6');

export const familyOfPrefix = (prefix: string): Family => (parsePrefix(prefix)?.[0].kind() === 'ipv4' ? 'v4' : 'v6');

/** A prefix or an interface address (`a`, `a/len`) as a canonical network. */
export const network = (text: string): string => networkOf(text) ?? text;

/** Prefixes of one family, canonical, each once, in their first order. */
export function prefixesOf(family: Family, prefixes: readonly string[]): string[] {
  return [...new Set(prefixes.map(network).filter((p) => familyOfPrefix(p) === family))];
}

/** `[ a, b ]`: a BIRD prefix set; callers skip empty lists. */
export const prefixSet = (patterns: readonly string[]): string => `[ ${patterns.join(', ')} ]`;

/** Lines indented by `depth` tabs, empty lines kept empty. */
export const indent = (lines: readonly string[], depth = 1): string[] => lines.map((l) => (l === '' ? l : `${'\t'.repeat(depth)}${l}`));

/** A block `head {`, its body indented, `}` (with `;` after channel and filter blocks). */
export const block = (head: string, body: readonly string[], close = '}'): string[] => [`${head} {`, ...indent(body), close];
