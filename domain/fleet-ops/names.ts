import type { PeeringRecord, SessionRecord } from '../node/events.js';
import { sha256Hex } from '../sha256.js';
import { parseIp, isIpv6LinkLocal } from '../net/ip.js';

/**
 * The fleet's naming convention for peerings and what hangs off them, derived
 * from the ASN (external) or the remote node (internal), so a name says what
 * it is wherever it appears (`wg show`, `birdc show protocols`, the console):
 *
 * - external peering with AS n: peering, interface and session `dn42_<n>`
 *   (a 32-bit ASN has at most 10 digits: `dn42_4242420001` is exactly the 15
 *   characters Linux allows for an interface name);
 * - internal peering with node r: `int_<r>`;
 * - several sessions on one peering: `_v4`, `_v6`, `_mp` by address family,
 *   or `_1`, `_2`, ... when two share a family.
 *
 * A name longer than its limit keeps its head and ends in `_` plus 4 hex digits
 * of its SHA-256, so it stays unique and the same on every run.
 */

export const INTERFACE_NAME_MAX = 15;
export const PEERING_NAME_MAX = 64;
export const SESSION_NAME_MAX = 64;

/** `name` cut to `max` characters, deterministically and (by its hash) still distinct. */
export function fitName(name: string, max: number): string {
  if (name.length <= max) return name;
  return `${name.slice(0, max - 5)}_${sha256Hex(name).slice(0, 4)}`;
}

/** The stem every name of a peering starts from; null for an internal peering without a remote node. */
export function peeringStem(peering: PeeringRecord): string | null {
  if (!peering.is_internal) return `dn42_${peering.remote_asn}`;
  return peering.remote_node_id ? `int_${peering.remote_node_id}` : null;
}

export const peeringName = (stem: string): string => fitName(stem, PEERING_NAME_MAX);

/** Interface names allow `[A-Za-z0-9_.-]`, which node ids already keep to. */
export const interfaceName = (stem: string): string => fitName(stem, INTERFACE_NAME_MAX);

/** Session names allow only `[A-Za-z0-9_]` (they become BIRD protocol names). */
export const sessionName = (stem: string): string => fitName(stem.replace(/[^A-Za-z0-9_]/g, '_'), SESSION_NAME_MAX);

/** `v4`, `v6` or `mp` (multiprotocol over link-local) for a session, as materialisation decides its family. */
export function familyTag(session: SessionRecord): 'v4' | 'v6' | 'mp' {
  const family = session.spec.address_family;
  if (family === 'ipv4') return 'v4';
  if (family === 'ipv6') return 'v6';
  if (family === 'mp-bgp') return 'mp';
  const address = session.spec.neighbor_address.split('%')[0];
  const ip = parseIp(address);
  if (ip?.kind() === 'ipv4') return 'v4';
  return isIpv6LinkLocal(ip) || session.spec.neighbor_address.includes('%') ? 'mp' : 'v6';
}

/** Conventional names of a peering's sessions, in the given order. */
export function sessionNames(stem: string, sessions: readonly SessionRecord[]): string[] {
  if (sessions.length === 1) return [sessionName(stem)];
  const tags = sessions.map(familyTag);
  const distinct = new Set(tags).size === tags.length;
  return sessions.map((_, i) => sessionName(`${stem}_${distinct ? tags[i] : i + 1}`));
}
