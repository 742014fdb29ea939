import type { DnsRecordState } from './state-schema.js';

/**
 * The addresses of a zone's own name servers, which BIND insists on: a zone
 * whose apex NS names a host inside the zone that has no A or AAAA record (or
 * is a CNAME) is not loaded ("NS 'ns1.<zone>' has no address records"), and
 * `named-checkconf -z` fails the DNS step of every member. A zone left on its
 * default name server `ns1.<zone>` starts that way.
 *
 * Decided by the server, so that every published document loads: such a name
 * server gets the group's bind addresses (the anycast addresses that serve the
 * zone, so the natural glue) as A/AAAA records in the document, until the zone
 * has an address record of its own for it. Without a bind address, or when the
 * name is a CNAME, nothing can be added: the zone is left out of the document
 * (members keep serving the rest) and the zone's read model says why. Used by
 * the desired state (`desired-state.ts`), the zone read model and the renderer,
 * which writes the implied `@ NS <primary_ns>` by the same rule.
 */

type RecordLike = Pick<DnsRecordState, 'name' | 'type' | 'content'>;

/** A zone as its members get it: names lower-case, only enabled records. */
export interface ZoneNames {
  zone: string;
  primary_ns: string;
  records: readonly RecordLike[];
}

export type NameServerAddresses = { ok: true; records: DnsRecordState[] } | { ok: false; problem: string };

/** Whether the zone lists its own apex NS records; without any, it is served with `@ NS <primary_ns>`. */
export const hasApexNs = (records: readonly RecordLike[]): boolean => records.some((r) => r.type === 'NS' && r.name === '@');

/** A record's owner or a name in its content, absolute, lower-case, without the trailing dot. */
function absolute(name: string, zone: string): string {
  if (name === '@') return zone;
  return (name.endsWith('.') ? name.slice(0, -1) : `${name}.${zone}`).toLowerCase();
}

const within = (name: string, parent: string) => name === parent || name.endsWith(`.${parent}`);

/** The zone's apex name servers, absolute: the targets of its `@` NS records, else `primary_ns`. */
export function apexNameServers(zone: ZoneNames): string[] {
  const targets = hasApexNs(zone.records)
    ? zone.records.filter((r) => r.type === 'NS' && r.name === '@').map((r) => absolute(r.content.split(' ')[0], zone.zone))
    : [zone.primary_ns.toLowerCase()];
  return [...new Set(targets)];
}

/**
 * The records to add so that BIND loads the zone, or why it cannot be loaded.
 * Only name servers inside the zone and above any delegation in it count (BIND
 * wants no address below a zone cut).
 */
export function nameServerAddresses(zone: ZoneNames, bindAddresses: readonly string[]): NameServerAddresses {
  const cuts = zone.records.filter((r) => r.type === 'NS' && r.name !== '@').map((r) => absolute(r.name, zone.zone));
  const typesAt = (name: string) => new Set(zone.records.filter((r) => absolute(r.name, zone.zone) === name).map((r) => r.type));
  const added: DnsRecordState[] = [];
  for (const ns of apexNameServers(zone)) {
    if (!within(ns, zone.zone) || cuts.some((cut) => within(ns, cut))) continue;
    const types = typesAt(ns);
    if (types.has('CNAME')) return { ok: false, problem: `name server ${ns} is a CNAME; members leave the zone out until it is not` };
    if (types.has('A') || types.has('AAAA')) continue;
    if (bindAddresses.length === 0) {
      return {
        ok: false,
        problem: `name server ${ns} lies inside the zone and has no A or AAAA record, and the group has no bind address to give it; members leave the zone out until it has one`,
      };
    }
    const name = ns === zone.zone ? '@' : ns.slice(0, -(zone.zone.length + 1));
    for (const address of new Set(bindAddresses)) added.push({ name, type: address.includes(':') ? 'AAAA' : 'A', content: address, ttl: null });
  }
  return { ok: true, records: added };
}
