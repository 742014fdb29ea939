import { expect } from 'chai';
import { dnsGroupDecider } from '../../../domain/dns/decide.js';
import type { DnsGroupEvent, GroupFields, RecordFields, ZoneFields } from '../../../domain/dns/events.js';
import { groupFieldsOf, recordFieldsOf, zoneFieldsOf } from '../../../domain/dns/specs.js';
import type { ActiveDnsGroup } from '../../../domain/dns/state.js';
import { fold } from '../../../domain/decider.js';
import { Conflict, NotFound, Validation } from '../../../domain/errors.js';
import { given } from '../../support/given.js';

const group: GroupFields = groupFieldsOf({ name: 'anycast', bind_addresses: ['172.20.0.53'] });
const zone = (name: string, extra: Partial<ZoneFields> = {}): ZoneFields => ({ ...zoneFieldsOf({ zone: name }), ...extra });
const record = (name: string, type: string, content: string, extra: Partial<RecordFields> = {}): RecordFields => ({
  ...recordFieldsOf({ name, type: 'A', content }),
  type,
  ...extra,
});

const created: DnsGroupEvent = { type: 'DnsGroupCreated', data: { group_id: 1, group } };
const zoneCreated: DnsGroupEvent = { type: 'DnsZoneCreated', data: { group_id: 1, zone_id: 10, zone: zone('example.dn42'), serial: 1 } };
const www: DnsGroupEvent = {
  type: 'DnsRecordCreated',
  data: { group_id: 1, zone_id: 10, record_id: 100, record: record('www', 'A', '172.20.0.80'), serial: 2 },
};

const stateOf = (events: DnsGroupEvent[]) => fold(dnsGroupDecider, events) as ActiveDnsGroup;

describe('dns group decider', () => {
  it('creates a group with canonical addresses; a second create of the id conflicts', () => {
    given(dnsGroupDecider, [])
      .when({
        type: 'CreateGroup',
        group_id: 1,
        group: { ...group, bind_addresses: ['fd42:0:0::53'], forwards: [{ zone: 'DN42.', upstreams: ['172.20.0.1'] }] },
      })
      .then([
        {
          type: 'DnsGroupCreated',
          data: { group_id: 1, group: { ...group, bind_addresses: ['fd42::53'], forwards: [{ zone: 'dn42', upstreams: ['172.20.0.1'] }] } },
        },
      ]);
    given(dnsGroupDecider, [created]).when({ type: 'CreateGroup', group_id: 1, group }).thenThrows(Conflict);
  });

  it('refuses bad bind addresses and forwards with every bad field located (422)', () => {
    const err = given(dnsGroupDecider, [])
      .when({
        type: 'CreateGroup',
        group_id: 1,
        group: {
          ...group,
          bind_addresses: ['172.20.0.300'],
          forwards: [
            { zone: 'a..b', upstreams: ['x'] },
            { zone: 'c', upstreams: ['::1'] },
            { zone: 'C.', upstreams: ['::1'] },
          ],
        },
      })
      .thenThrows(Validation, 'invalid dns group') as Validation;
    expect(err.errors.map((e) => e.loc)).to.deep.equal([
      ['body', 'bind_addresses', 0],
      ['body', 'forwards', 0, 'zone'],
      ['body', 'forwards', 0, 'upstreams', 0],
      ['body', 'forwards', 2, 'zone'],
    ]);
  });

  it('names unknown groups, zones and records in the contract family', () => {
    given(dnsGroupDecider, []).when({ type: 'UpdateGroup', group_id: 7, changes: {} }).thenThrows(NotFound, 'unknown dns group 7');
    given(dnsGroupDecider, [created, { type: 'DnsGroupDeleted', data: { group_id: 1 } }])
      .when({ type: 'CreateZone', group_id: 1, zone_id: 2, zone: zone('x') })
      .thenThrows(NotFound, 'unknown dns group 1');
    given(dnsGroupDecider, [created]).when({ type: 'DeleteZone', group_id: 1, zone_id: 99 }).thenThrows(NotFound, 'unknown dns zone 99');
    given(dnsGroupDecider, [created, zoneCreated])
      .when({ type: 'DeleteRecord', group_id: 1, zone_id: 10, record_id: 5 })
      .thenThrows(NotFound, 'unknown dns record 5');
  });

  it('accepts RFC 2317 classless zone names, lower-cases and drops the trailing dot; refuses invalid names', () => {
    given(dnsGroupDecider, [created])
      .when({ type: 'CreateZone', group_id: 1, zone_id: 11, zone: zone('0/26.2.0.192.IN-ADDR.ARPA.') })
      .then([{ type: 'DnsZoneCreated', data: { group_id: 1, zone_id: 11, zone: zone('0/26.2.0.192.in-addr.arpa'), serial: 1 } }]);
    for (const bad of ['-a.dn42', 'a..dn42', 'a b.dn42', '/26.1.in-addr.arpa', `${'x'.repeat(64)}.dn42`, 'a;b']) {
      given(dnsGroupDecider, [created])
        .when({ type: 'CreateZone', group_id: 1, zone_id: 11, zone: zone(bad) })
        .thenThrows(Validation, 'invalid zone name');
    }
    given(dnsGroupDecider, [created])
      .when({ type: 'CreateZone', group_id: 1, zone_id: 11, zone: zone('ok.dn42', { admin_email: 'no-at-sign' }) })
      .thenThrows(Validation, 'invalid dns zone');
  });

  it('refuses a second zone of the same name in the group, also by rename and by case', () => {
    given(dnsGroupDecider, [created, zoneCreated])
      .when({ type: 'CreateZone', group_id: 1, zone_id: 11, zone: zone('Example.DN42') })
      .thenThrows(Conflict, 'dns zone example.dn42 already exists in group 1');
    const other: DnsGroupEvent = { type: 'DnsZoneCreated', data: { group_id: 1, zone_id: 11, zone: zone('other.dn42'), serial: 1 } };
    given(dnsGroupDecider, [created, zoneCreated, other])
      .when({ type: 'UpdateZone', group_id: 1, zone_id: 11, changes: { zone: 'example.dn42' } })
      .thenThrows(Conflict);
  });

  it('decides nothing for an update that changes nothing, and carries only the fields that change', () => {
    const history = [created, zoneCreated, www];
    given(dnsGroupDecider, history).when({ type: 'UpdateGroup', group_id: 1, changes: {} }).then([]);
    given(dnsGroupDecider, history)
      .when({ type: 'UpdateGroup', group_id: 1, changes: { name: 'anycast', bind_addresses: ['172.20.0.53'], forwards: [], enabled: true } })
      .then([]);
    given(dnsGroupDecider, history)
      .when({ type: 'UpdateGroup', group_id: 1, changes: { name: 'anycast', cache_ttl_seconds: 60 } })
      .then([{ type: 'DnsGroupUpdated', data: { group_id: 1, changes: { cache_ttl_seconds: 60 } } }]);
    given(dnsGroupDecider, history).when({ type: 'UpdateZone', group_id: 1, zone_id: 10, changes: {} }).then([]);
    given(dnsGroupDecider, history)
      .when({ type: 'UpdateZone', group_id: 1, zone_id: 10, changes: { zone: 'EXAMPLE.dn42.', primary_ns: null, soa_refresh: 3600 } })
      .then([]);
    given(dnsGroupDecider, history)
      .when({ type: 'UpdateZone', group_id: 1, zone_id: 10, changes: { zone: 'example.dn42', default_ttl: 60 } })
      .then([{ type: 'DnsZoneUpdated', data: { group_id: 1, zone_id: 10, changes: { default_ttl: 60 }, serial: 3 } }]);
    given(dnsGroupDecider, history).when({ type: 'UpdateRecord', group_id: 1, zone_id: 10, record_id: 100, changes: {} }).then([]);
    given(dnsGroupDecider, history)
      .when({ type: 'UpdateRecord', group_id: 1, zone_id: 10, record_id: 100, changes: { type: 'A', content: '172.20.0.80', ttl: null, enabled: true } })
      .then([]);
    given(dnsGroupDecider, history)
      .when({ type: 'UpdateRecord', group_id: 1, zone_id: 10, record_id: 100, changes: { type: 'A', comment: 'web' } })
      .then([{ type: 'DnsRecordUpdated', data: { group_id: 1, zone_id: 10, record_id: 100, changes: { comment: 'web' }, serial: 3 } }]);
  });

  it('moves the serial of each zone whose name-server addresses come from the bind addresses when they change, and only those', () => {
    // example.dn42 (serial 2) is on ns1.example.dn42 without an address record; other.dn42 has its own; outside.dn42 names a server elsewhere.
    const other: DnsGroupEvent = { type: 'DnsZoneCreated', data: { group_id: 1, zone_id: 11, zone: zone('other.dn42'), serial: 1 } };
    const otherNs: DnsGroupEvent = {
      type: 'DnsRecordCreated',
      data: { group_id: 1, zone_id: 11, record_id: 101, record: record('ns1', 'A', '172.20.0.54'), serial: 2 },
    };
    const outside: DnsGroupEvent = {
      type: 'DnsZoneCreated',
      data: { group_id: 1, zone_id: 12, zone: zone('outside.dn42', { primary_ns: 'ns.example.dn42' }), serial: 4 },
    };
    const history = [created, zoneCreated, www, other, otherNs, outside];
    given(dnsGroupDecider, history)
      .when({ type: 'UpdateGroup', group_id: 1, changes: { bind_addresses: ['172.20.0.53', 'fd42::53'] } })
      .then([
        { type: 'DnsGroupUpdated', data: { group_id: 1, changes: { bind_addresses: ['172.20.0.53', 'fd42::53'] }, serials: [{ zone_id: 10, serial: 3 }] } },
      ]);
    given(dnsGroupDecider, history)
      .when({ type: 'UpdateGroup', group_id: 1, changes: { bind_addresses: [] } })
      .thenState((s) =>
        expect(
          (s as ActiveDnsGroup).zones.map((z) => z.serial),
          'example.dn42 is left out now',
        ).to.deep.equal([3, 2, 4]),
      );
    // Other group fields leave every serial.
    given(dnsGroupDecider, history)
      .when({ type: 'UpdateGroup', group_id: 1, changes: { cache_ttl_seconds: 60 } })
      .then([{ type: 'DnsGroupUpdated', data: { group_id: 1, changes: { cache_ttl_seconds: 60 } } }]);
  });

  it('moves the SOA serial on with every write to the zone or its records, never backwards', () => {
    given(dnsGroupDecider, [created, zoneCreated, www])
      .when({ type: 'UpdateZone', group_id: 1, zone_id: 10, changes: { soa_refresh: 7200 } })
      .thenState((s) => expect((s as ActiveDnsGroup).zones[0]).to.include({ serial: 3, soa_refresh: 7200 }));
    given(dnsGroupDecider, [created, zoneCreated, www])
      .when({ type: 'DeleteRecord', group_id: 1, zone_id: 10, record_id: 100 })
      .then([{ type: 'DnsRecordDeleted', data: { group_id: 1, zone_id: 10, record_id: 100, serial: 3 } }]);
    // A zone deleted and created again under its name continues from its highest serial.
    const again = given(dnsGroupDecider, [created, zoneCreated, www, { type: 'DnsZoneDeleted', data: { group_id: 1, zone_id: 10 } }])
      .when({ type: 'CreateZone', group_id: 1, zone_id: 12, zone: zone('example.dn42') })
      .then([{ type: 'DnsZoneCreated', data: { group_id: 1, zone_id: 12, zone: zone('example.dn42'), serial: 3 } }]);
    expect(again).to.have.length(1);
    // So does a zone renamed onto a name that had a higher serial before.
    const history: DnsGroupEvent[] = [
      created,
      zoneCreated,
      www,
      { type: 'DnsZoneDeleted', data: { group_id: 1, zone_id: 10 } },
      { type: 'DnsZoneCreated', data: { group_id: 1, zone_id: 13, zone: zone('new.dn42'), serial: 1 } },
    ];
    given(dnsGroupDecider, history)
      .when({ type: 'UpdateZone', group_id: 1, zone_id: 13, changes: { zone: 'example.dn42' } })
      .thenState((s) => expect((s as ActiveDnsGroup).zones[0]).to.include({ zone: 'example.dn42', serial: 3 }));
  });

  it('checks record content per type and stores its canonical form', () => {
    given(dnsGroupDecider, [created, zoneCreated])
      .when({ type: 'CreateRecord', group_id: 1, zone_id: 10, record_id: 101, record: record('v6', 'AAAA', 'FD42:0000::1') })
      .then([{ type: 'DnsRecordCreated', data: { group_id: 1, zone_id: 10, record_id: 101, record: record('v6', 'AAAA', 'fd42::1'), serial: 2 } }]);
    const err = given(dnsGroupDecider, [created, zoneCreated])
      .when({ type: 'CreateRecord', group_id: 1, zone_id: 10, record_id: 101, record: record('www', 'A', 'fd42::1') })
      .thenThrows(Validation, 'invalid A record content') as Validation;
    expect(err.errors).to.deep.equal([{ loc: ['body', 'content'], msg: 'expected an IPv4 address', type: 'dns_content' }]);
    given(dnsGroupDecider, [created, zoneCreated])
      .when({ type: 'CreateRecord', group_id: 1, zone_id: 10, record_id: 101, record: record('www.', 'A', '172.20.0.1') })
      .thenThrows(Validation, 'invalid record name');
  });

  it('re-checks the content against a new type on PATCH', () => {
    given(dnsGroupDecider, [created, zoneCreated, www])
      .when({ type: 'UpdateRecord', group_id: 1, zone_id: 10, record_id: 100, changes: { type: 'AAAA' } })
      .thenThrows(Validation, 'invalid AAAA record content');
    given(dnsGroupDecider, [created, zoneCreated, www])
      .when({ type: 'UpdateRecord', group_id: 1, zone_id: 10, record_id: 100, changes: { type: 'CNAME', content: 'Web.Example.dn42.' } })
      .then([
        { type: 'DnsRecordUpdated', data: { group_id: 1, zone_id: 10, record_id: 100, changes: { type: 'CNAME', content: 'Web.Example.dn42.' }, serial: 3 } },
      ]);
  });

  it('keeps a CNAME alone at its name among enabled records, and off the apex', () => {
    const cname = (name: string, extra: Partial<RecordFields> = {}) => record(name, 'CNAME', 'target.dn42.', extra);
    given(dnsGroupDecider, [created, zoneCreated, www])
      .when({ type: 'CreateRecord', group_id: 1, zone_id: 10, record_id: 101, record: cname('WWW') })
      .thenThrows(Conflict, /a CNAME cannot share its name/);
    given(dnsGroupDecider, [created, zoneCreated])
      .when({ type: 'CreateRecord', group_id: 1, zone_id: 10, record_id: 101, record: cname('@') })
      .thenThrows(Conflict, 'a CNAME cannot be at the apex of zone example.dn42');
    // A disabled record does not count, but enabling it is checked.
    const disabled: DnsGroupEvent = {
      type: 'DnsRecordCreated',
      data: { group_id: 1, zone_id: 10, record_id: 101, record: cname('www', { enabled: false }), serial: 3 },
    };
    given(dnsGroupDecider, [created, zoneCreated, www])
      .when({ type: 'CreateRecord', group_id: 1, zone_id: 10, record_id: 101, record: cname('www', { enabled: false }) })
      .then([disabled]);
    given(dnsGroupDecider, [created, zoneCreated, www, disabled])
      .when({ type: 'UpdateRecord', group_id: 1, zone_id: 10, record_id: 101, changes: { enabled: true } })
      .thenThrows(Conflict);
  });

  it("refuses what BIND's check-names refuses in a primary zone: host-name owners and targets, SOA names; a rename re-checks the records", () => {
    const create = (r: RecordFields, events: DnsGroupEvent[] = [created, zoneCreated]) =>
      given(dnsGroupDecider, events).when({ type: 'CreateRecord', group_id: 1, zone_id: 10, record_id: 101, record: r });
    const err = create(record('_x', 'A', '172.20.0.1')).thenThrows(Validation, 'invalid record name') as Validation;
    expect(err.errors).to.deep.equal([
      {
        loc: ['body', 'name'],
        msg: 'the owner of an A record must be a host name (letters, digits, inner hyphens), and _x.example.dn42 is not',
        type: 'check_names',
      },
    ]);
    create(record('m', 'MX', '10 mail_x')).thenThrows(Validation, 'invalid MX record content');
    create(record('sub', 'NS', 'ns_1.example.dn42.')).thenThrows(Validation, 'invalid NS record content');
    create(record('_sip._udp', 'SRV', '1 1 5060 a_b')).thenThrows(Validation, 'invalid SRV record content');
    create(record('_dmarc', 'TXT', 'v=DMARC1; p=none')).then([
      { type: 'DnsRecordCreated', data: { group_id: 1, zone_id: 10, record_id: 101, record: record('_dmarc', 'TXT', '"v=DMARC1; p=none"'), serial: 2 } },
    ]);
    given(dnsGroupDecider, [created, zoneCreated, www])
      .when({ type: 'UpdateRecord', group_id: 1, zone_id: 10, record_id: 100, changes: { name: 'a_b' } })
      .thenThrows(Validation, 'invalid record name');

    const classless: DnsGroupEvent = { type: 'DnsZoneCreated', data: { group_id: 1, zone_id: 11, zone: zone('0/26.2.0.192.in-addr.arpa'), serial: 1 } };
    const inClassless = (r: RecordFields) =>
      given(dnsGroupDecider, [created, classless]).when({ type: 'CreateRecord', group_id: 1, zone_id: 11, record_id: 101, record: r });
    inClassless(record('1', 'PTR', 'router')).thenThrows(Validation, 'invalid PTR record content');
    inClassless(record('1', 'A', '172.20.0.1')).thenThrows(Validation, 'invalid record name');
    inClassless(record('1', 'PTR', 'router.example.dn42.')).then([
      { type: 'DnsRecordCreated', data: { group_id: 1, zone_id: 11, record_id: 101, record: record('1', 'PTR', 'router.example.dn42.'), serial: 2 } },
    ]);

    const soa = given(dnsGroupDecider, [created])
      .when({
        type: 'CreateZone',
        group_id: 1,
        zone_id: 12,
        zone: zone('0/26.2.0.192.in-addr.arpa', { primary_ns: 'ns1.0/26.2.0.192.in-addr.arpa', admin_email: 'ops@0/26.2.0.192.in-addr.arpa' }),
      })
      .thenThrows(Validation, 'invalid dns zone') as Validation;
    expect(soa.errors.map((e) => e.loc)).to.deep.equal([
      ['body', 'primary_ns'],
      ['body', 'admin_email'],
    ]);
    // Renamed into a classless name, the zone's A record would get a slash in its owner.
    const rename = given(dnsGroupDecider, [created, zoneCreated, www])
      .when({ type: 'UpdateZone', group_id: 1, zone_id: 10, changes: { zone: '0/26.2.0.192.in-addr.arpa' } })
      .thenThrows(Validation, 'invalid zone name') as Validation;
    expect(rename.errors[0]).to.include({
      msg: 'record 100 (www A): the owner of an A record must be a host name (letters, digits, inner hyphens), and www.0/26.2.0.192.in-addr.arpa is not',
    });
  });

  it('records members once; leaving removes them; the state keeps them sorted', () => {
    const joined = (node_id: string): DnsGroupEvent => ({ type: 'DnsGroupMemberJoined', data: { group_id: 1, node_id } });
    given(dnsGroupDecider, [created, joined('fra1')])
      .when({ type: 'JoinGroup', group_id: 1, node_id: 'fra1' })
      .then([]);
    given(dnsGroupDecider, [created]).when({ type: 'LeaveGroup', group_id: 1, node_id: 'fra1' }).then([]);
    expect(
      stateOf([created, joined('zrh1'), joined('ams1'), joined('fra1'), { type: 'DnsGroupMemberLeft', data: { group_id: 1, node_id: 'fra1' } }]).members,
    ).to.deep.equal(['ams1', 'zrh1']);
  });
});
