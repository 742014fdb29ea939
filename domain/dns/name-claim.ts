import type { DomainEvent } from '../decider.js';
import { Conflict } from '../errors.js';
import { sha256Hex } from '../sha256.js';

/**
 * DNS group names are unique across groups, which live in streams of their own.
 * A name is claimed in a stream keyed by the name (`dns-group-name-<sha256>`),
 * appended in the same append as the group's creation or rename, so two
 * concurrent claims of one name conflict on that stream and one gets the 409.
 */
export type DnsGroupNameEvent =
  DomainEvent<'DnsGroupNameClaimed', { name: string; group_id: number }> | DomainEvent<'DnsGroupNameReleased', { name: string; group_id: number }>;

export const dnsGroupNameStream = (name: string): string => `dns-group-name-${sha256Hex(name)}`;

/** The group holding the name, if any, after these events. */
export function nameHolder(events: readonly DnsGroupNameEvent[]): number | null {
  let holder: number | null = null;
  for (const e of events) holder = e.type === 'DnsGroupNameClaimed' ? e.data.group_id : null;
  return holder;
}

/** Claims `name` for the group: nothing when it already holds it, 409 when another group does. */
export function claimName(events: readonly DnsGroupNameEvent[], name: string, groupId: number): DnsGroupNameEvent[] {
  const holder = nameHolder(events);
  if (holder === groupId) return [];
  if (holder !== null) throw new Conflict(`dns group ${name} already exists`);
  return [{ type: 'DnsGroupNameClaimed', data: { name, group_id: groupId } }];
}

/** Lets the name go (group renamed or deleted); nothing when the group does not hold it. */
export function releaseName(events: readonly DnsGroupNameEvent[], name: string, groupId: number): DnsGroupNameEvent[] {
  return nameHolder(events) === groupId ? [{ type: 'DnsGroupNameReleased', data: { name, group_id: groupId } }] : [];
}
