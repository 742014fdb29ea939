import { fold } from '../domain/decider.js';
import { dnsGroupDecider } from '../domain/dns/decide.js';
import { dnsGroupStream, type DnsGroupEvent } from '../domain/dns/events.js';
import type { ActiveDnsGroup } from '../domain/dns/state.js';
import type { LoadMore } from './handle.js';

/**
 * A DNS group as its stream tells it, for materialising a member node; null when
 * it does not exist (any more). Loaded through the decision's `more`, so a write
 * that also appends to the group checks the version it materialised from.
 */
export async function loadDnsGroup(more: LoadMore, groupId: number): Promise<ActiveDnsGroup | null> {
  const state = fold(dnsGroupDecider, (await more(dnsGroupStream(groupId))).events as DnsGroupEvent[]);
  return state.status === 'Active' ? state : null;
}
