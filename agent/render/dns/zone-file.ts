import type { DnsRecordState, DnsZoneState } from '../../../domain/desired-state/schema.js';
import { hasApexNs } from '../../../domain/dns/name-servers.js';
import { safeComment } from '../text.js';
import { RenderError } from '../types.js';
import { fqdn, rname } from './names.js';

/**
 * One zone file per authoritative zone. `$ORIGIN` is the zone, so record names
 * stay relative as the document has them (`@` the apex); every record carries
 * its TTL (its own, or the zone's `default_ttl`, which is also `$TTL`). The
 * content is written as given (presentation form), but a control character
 * would let one record's content write further lines (`$INCLUDE` …), so it
 * fails the render instead.
 *
 * A zone needs NS records at its apex: when the document has none, the zone
 * gets one for `primary_ns` (also its SOA MNAME), by the rule the server uses
 * (`hasApexNs`). The server also gives a name server inside the zone its
 * address records (`domain/dns/name-servers.ts`); the renderer invents none,
 * so a document without them is refused by `named-checkconf -z` as BIND would
 * refuse it, and the DNS step fails with BIND's own words.
 */

function recordLine(zone: DnsZoneState, r: DnsRecordState): string {
  if (/[\x00-\x08\x0a-\x1f\x7f]/.test(r.content))
    throw new RenderError(`invalid content of ${r.type} record '${r.name}' in zone ${zone.zone}: control characters are not allowed`);
  return `${r.name}\t${r.ttl ?? zone.default_ttl}\tIN\t${r.type}\t${r.content}`;
}

export function zoneFile(zone: DnsZoneState, groupName: string): string {
  const lines = [
    `; dn42-agent: zone ${zone.zone} of DNS group ${safeComment(groupName)}, rendered; the next apply overwrites it.`,
    `$ORIGIN ${fqdn(zone.zone)}`,
    `$TTL ${zone.default_ttl}`,
    `@\t${zone.default_ttl}\tIN\tSOA\t${fqdn(zone.primary_ns)} ${rname(zone.admin_email)} (`,
    `\t\t${zone.soa_serial} ; serial`,
    `\t\t${zone.soa_refresh} ; refresh`,
    `\t\t${zone.soa_retry} ; retry`,
    `\t\t${zone.soa_expire} ; expire`,
    `\t\t${zone.soa_minimum} ; minimum (negative caching)`,
    '\t)',
    ...(hasApexNs(zone.records) ? [] : [`@\t${zone.default_ttl}\tIN\tNS\t${fqdn(zone.primary_ns)}`]),
    ...zone.records.map((r) => recordLine(zone, r)),
  ];
  return `${lines.join('\n')}\n`;
}
