import { expect } from 'chai';
import { fold } from '../../../domain/decider.js';
import { dnsGroupDecider } from '../../../domain/dns/decide.js';
import { dnsStateOf } from '../../../domain/dns/desired-state.js';
import type { DnsGroupEvent } from '../../../domain/dns/events.js';
import { groupFieldsOf, recordFieldsOf, zoneFieldsOf } from '../../../domain/dns/specs.js';
import type { ActiveDnsGroup } from '../../../domain/dns/state.js';
import { emptyDesiredState, materialise } from '../../../domain/desired-state/materialise.js';
import { validateDesiredState } from '../../../domain/desired-state/schema.js';
import { context, liveNode } from '../desired-state/fixtures.js';
import { ZONE_SOA_DEFAULTS } from '../../support/dns.js';

/** A group folded from the decider's own events, as the command layer sees it. */
function groupFrom(commands: Parameters<typeof dnsGroupDecider.decide>[0][]): ActiveDnsGroup {
  const events: DnsGroupEvent[] = [];
  for (const command of commands) events.push(...dnsGroupDecider.decide(command, fold(dnsGroupDecider, events)));
  return fold(dnsGroupDecider, events) as ActiveDnsGroup;
}

const group = groupFrom([
  {
    type: 'CreateGroup',
    group_id: 3,
    group: groupFieldsOf({ name: 'anycast', bind_addresses: ['172.20.0.53', 'fd42::53'], forwards: [{ zone: 'dn42', upstreams: ['172.20.0.1'] }] }),
  },
  { type: 'CreateZone', group_id: 3, zone_id: 20, zone: zoneFieldsOf({ zone: 'zzz.dn42', primary_ns: 'ns.example.dn42', admin_email: 'ops@example.dn42' }) },
  { type: 'CreateZone', group_id: 3, zone_id: 21, zone: zoneFieldsOf({ zone: '0/26.2.0.192.in-addr.arpa' }) },
  { type: 'CreateZone', group_id: 3, zone_id: 22, zone: zoneFieldsOf({ zone: 'off.dn42', enabled: false }) },
  { type: 'CreateRecord', group_id: 3, zone_id: 20, record_id: 200, record: recordFieldsOf({ name: 'b', type: 'A', content: '172.20.0.2', sort_order: 1 }) },
  {
    type: 'CreateRecord',
    group_id: 3,
    zone_id: 20,
    record_id: 201,
    record: recordFieldsOf({ name: 'a', type: 'A', content: '172.20.0.1', sort_order: 1, ttl: 60 }),
  },
  { type: 'CreateRecord', group_id: 3, zone_id: 20, record_id: 202, record: recordFieldsOf({ name: 'c', type: 'TXT', content: 'first', sort_order: 0 }) },
  { type: 'CreateRecord', group_id: 3, zone_id: 20, record_id: 203, record: recordFieldsOf({ name: 'd', type: 'A', content: '172.20.0.4', enabled: false }) },
  { type: 'CreateRecord', group_id: 3, zone_id: 21, record_id: 204, record: recordFieldsOf({ name: '1', type: 'PTR', content: 'router.example.dn42.' }) },
]);

describe('dns section of the desired state', () => {
  it('carries the group, its enabled zones by name and their enabled records by (sort_order, id)', () => {
    expect(dnsStateOf(group)).to.deep.equal({
      group_id: 3,
      group_name: 'anycast',
      bind_addresses: ['172.20.0.53', 'fd42::53'],
      cache_ttl_seconds: 300,
      forwards: [{ zone: 'dn42', upstreams: ['172.20.0.1'] }],
      zones: [
        {
          zone: '0/26.2.0.192.in-addr.arpa',
          // Defaults under the zone's host-name part: BIND's check-names refuses a slash in the SOA names.
          primary_ns: 'ns1.2.0.192.in-addr.arpa',
          admin_email: 'hostmaster@2.0.192.in-addr.arpa',
          soa_serial: 2,
          ...ZONE_SOA_DEFAULTS,
          records: [{ name: '1', type: 'PTR', content: 'router.example.dn42.', ttl: null }],
        },
        {
          zone: 'zzz.dn42',
          primary_ns: 'ns.example.dn42',
          admin_email: 'ops@example.dn42',
          soa_serial: 5,
          ...ZONE_SOA_DEFAULTS,
          records: [
            { name: 'c', type: 'TXT', content: '"first"', ttl: null },
            { name: 'b', type: 'A', content: '172.20.0.2', ttl: null },
            { name: 'a', type: 'A', content: '172.20.0.1', ttl: 60 },
          ],
        },
      ],
    });
  });

  it('adds the bind addresses for an in-zone name server without an address record, and leaves out a zone it cannot help', () => {
    const withDefaults = (bind_addresses: string[]) =>
      groupFrom([
        { type: 'CreateGroup', group_id: 4, group: groupFieldsOf({ name: 'g', bind_addresses }) },
        { type: 'CreateZone', group_id: 4, zone_id: 30, zone: zoneFieldsOf({ zone: 'defaults.dn42' }) },
        { type: 'CreateRecord', group_id: 4, zone_id: 30, record_id: 300, record: recordFieldsOf({ name: 'www', type: 'A', content: '172.20.0.80' }) },
        { type: 'CreateZone', group_id: 4, zone_id: 31, zone: zoneFieldsOf({ zone: 'outside.dn42', primary_ns: 'ns.example.dn42' }) },
      ]);
    expect(dnsStateOf(withDefaults(['fd42::53']))!.zones[0]).to.deep.include({
      zone: 'defaults.dn42',
      primary_ns: 'ns1.defaults.dn42',
      records: [
        { name: 'www', type: 'A', content: '172.20.0.80', ttl: null },
        { name: 'ns1', type: 'AAAA', content: 'fd42::53', ttl: null },
      ],
    });
    expect(dnsStateOf(withDefaults([]))!.zones.map((z) => z.zone)).to.deep.equal(['outside.dn42']);
  });

  it('is null without a group and while the group is disabled', () => {
    expect(dnsStateOf(null)).to.equal(null);
    expect(dnsStateOf({ ...group, enabled: false })).to.equal(null);
  });

  it('goes into a member node document that validates against the desired-state schema', () => {
    const doc = materialise(liveNode(), { ...context(), dns_group: group });
    expect(doc.dns?.zones.map((z) => z.zone)).to.deep.equal(['0/26.2.0.192.in-addr.arpa', 'zzz.dn42']);
    expect(validateDesiredState(doc)).to.deep.equal({ ok: true });
    // A decommissioned member serves nothing.
    expect(materialise(liveNode({}, { lifecycle: 'decommissioned' }), { ...context(), dns_group: group }).dns).to.equal(null);
    expect(emptyDesiredState(liveNode()).dns).to.equal(null);
  });

  it('is the same document for the same group (no clock inside)', () => {
    expect(JSON.stringify(dnsStateOf(group))).to.equal(JSON.stringify(dnsStateOf(structuredClone(group))));
  });
});
