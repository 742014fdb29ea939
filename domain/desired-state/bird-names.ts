import { createHash } from 'node:crypto';
import type { BgpSessionState, Router } from './schema.js';

/** An address family as the protocol names spell it. */
export type Family = 'v4' | 'v6';
export const FAMILIES: readonly Family[] = ['v4', 'v6'];

/**
 * BIRD protocol names, shared by the agent (which renders them) and the control
 * server (which finds them again in the routing tables agents report). Every
 * keyword of BIRD is a reserved word even inside apostrophes (`protocol bgp
 * 'import'` is a syntax error), and a name of hex pairs reads as a byte string,
 * so no name of the document becomes a protocol name as is: eBGP sessions get `ebgp_`, iBGP neighbours `ibgp_`, the fixed
 * protocols names no prefix of those. BIRD symbols are at most 64 characters;
 * a longer name keeps its start and gets a hash of the whole (stays unique).
 */

const MAX_SYMBOL = 64;
const hash8 = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 8);

/** Fixed protocol names: none starts with `ebgp_` or `ibgp_`. */
export const PROTOCOL = {
  device: 'device1',
  direct: 'direct1',
  bfd: 'bfd1',
  kernel: (f: Family) => `kernel_${f}`,
  own: (f: Family) => `own_${f}`,
  hosts: (f: Family) => `hosts_${f}`,
  ospf: (f: Family) => `ospf_${f}`,
  roa: (f: Family) => `roa_${f}`,
} as const;

/** `prefix + name + suffix`, shortened to 64 characters with a hash of `name` when longer. */
function symbol(prefix: string, name: string, suffix = ''): string {
  const whole = `${prefix}${name}${suffix}`;
  if (whole.length <= MAX_SYMBOL) return whole;
  const room = MAX_SYMBOL - prefix.length - suffix.length - 9;
  return `${prefix}${name.slice(0, room)}_${hash8(name)}${suffix}`;
}

/** The BIRD protocol of an eBGP session (`birdc show protocols` lists it under this name). */
export const bgpProtocolName = (session: Pick<BgpSessionState, 'name'>): string => symbol('ebgp_', session.name);

/**
 * The names under which agents report an eBGP session's protocol: the
 * rendered `ebgp_<name>` (what `birdc show protocols` lists on a node), and
 * the bare session name (what a hand-written configuration or a report made
 * by hand carries). Views that find a session in reports match either.
 */
export const reportedProtocolNames = (sessionName: string): string[] => [bgpProtocolName({ name: sessionName }), sessionName];

/** Whether a reported protocol name (quoted or not) is the protocol of the eBGP session `sessionName`. */
export const isProtocolOfSession = (reported: string, sessionName: string): boolean => reportedProtocolNames(sessionName).includes(shownProtocolName(reported));

/** The named filter of an eBGP session's channel: `ebgp_<name>_import_v4`. */
export const bgpFilterName = (session: Pick<BgpSessionState, 'name'>, direction: 'import' | 'export', family: Family): string =>
  symbol('ebgp_', session.name, `_${direction}_${family}`);

/**
 * The iBGP protocol towards `router` for one family. Node ids are free text:
 * one made of word characters is used as is; one that also has `.`, `:` or `-`
 * goes into an apostrophed symbol; anything else is replaced by `_` plus a hash
 * of the original, so two ids never share a name.
 */
export function ibgpProtocolName(router: Pick<Router, 'node_id'>, family: Family): string {
  const id = router.node_id;
  if (/^\w+$/.test(id)) return symbol('ibgp_', id, `_${family}`);
  if (/^[\w.:-]+$/.test(id)) return `'${symbol('ibgp_', id, `_${family}`)}'`;
  return symbol('ibgp_', `${id.replace(/\W/g, '_')}_${hash8(id)}`, `_${family}`);
}

/** A protocol symbol as BIRD shows it (`birdc show route` prints `'ibgp_a-b_v4'` as `ibgp_a-b_v4`). */
export const shownProtocolName = (symbol: string): string => (symbol.startsWith("'") && symbol.endsWith("'") ? symbol.slice(1, -1) : symbol);
