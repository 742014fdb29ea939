import type { DnsRecordState, DnsState, DnsZoneState } from './state-schema.js';
import { hostSuffix } from './check-names.js';
import { nameServerAddresses, type ZoneNames } from './name-servers.js';
import type { ActiveDnsGroup, DnsZone } from './state.js';

/**
 * The `dns` section of a member node's desired state: null without a group or
 * while the group is disabled; otherwise the group's resolver settings and its
 * enabled zones (by name) with their enabled records (by sort_order, then id).
 * A pure function of the group's stream: the SOA serial is the zone's counter,
 * never a time.
 *
 * Every zone in it loads in BIND: an in-zone name server without an address
 * record gets the group's bind addresses after the zone's records, and a zone
 * that cannot be given one is left out (`name-servers.ts`).
 */
export function dnsStateOf(group: ActiveDnsGroup | null | undefined): DnsState | null {
  if (!group || !group.enabled) return null;
  return {
    group_id: group.group_id,
    group_name: group.name,
    bind_addresses: [...group.bind_addresses],
    cache_ttl_seconds: group.cache_ttl_seconds,
    forwards: group.forwards.map((f) => ({ zone: f.zone, upstreams: [...f.upstreams] })),
    zones: group.zones
      .filter((z) => z.enabled)
      .sort((a, b) => (a.zone < b.zone ? -1 : a.zone > b.zone ? 1 : 0))
      .flatMap((z) => zoneState(z, group.bind_addresses)),
  };
}

/**
 * Defaults of a zone's SOA names, following the zone's (current) name: under
 * its host-name part, so that an RFC 2317 zone (`0/26.2.0.192.in-addr.arpa`)
 * gets `ns1.2.0.192.in-addr.arpa`, which BIND's `check-names` accepts, and not
 * a name with a slash, which it refuses.
 */
export const defaultPrimaryNs = (zone: string): string => `ns1.${hostSuffix(zone)}`;
export const defaultAdminEmail = (zone: string): string => `hostmaster@${hostSuffix(zone)}`;

/** The zone's SOA MNAME and enabled records (by sort_order, then id) as the document carries them. */
export function servedNames(zone: DnsZone): ZoneNames & { records: DnsRecordState[] } {
  const records = zone.records
    .filter((r) => r.enabled)
    .sort((a, b) => a.sort_order - b.sort_order || a.id - b.id)
    .map((r): DnsRecordState => ({ name: r.name, type: r.type as DnsRecordState['type'], content: r.content, ttl: r.ttl }));
  return { zone: zone.zone, primary_ns: zone.primary_ns ?? defaultPrimaryNs(zone.zone), records };
}

/** The zone as its members serve it, or none when BIND could not load it (see `nameServerAddresses`). */
function zoneState(zone: DnsZone, bindAddresses: readonly string[]): DnsZoneState[] {
  const { primary_ns, records } = servedNames(zone);
  const addresses = nameServerAddresses({ zone: zone.zone, primary_ns, records }, bindAddresses);
  if (!addresses.ok) return [];
  const state: DnsZoneState = {
    zone: zone.zone,
    primary_ns,
    admin_email: zone.admin_email ?? defaultAdminEmail(zone.zone),
    soa_serial: zone.serial,
    soa_refresh: zone.soa_refresh,
    soa_retry: zone.soa_retry,
    soa_expire: zone.soa_expire,
    soa_minimum: zone.soa_minimum,
    default_ttl: zone.default_ttl,
    records: [...records, ...addresses.records],
  };
  return [state];
}
