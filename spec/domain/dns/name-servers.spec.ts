import { expect } from 'chai';
import { apexNameServers, nameServerAddresses, type ZoneNames } from '../../../domain/dns/name-servers.js';
import type { DnsRecordState } from '../../../domain/desired-state/schema.js';

const rec = (name: string, type: DnsRecordState['type'], content: string): DnsRecordState => ({ name, type, content, ttl: null });
const zone = (records: DnsRecordState[], primary_ns = 'ns1.example.dn42'): ZoneNames => ({ zone: 'example.dn42', primary_ns, records });
const BIND = ['172.20.0.53', 'fd42::53'];
const added = (name: string) => [rec(name, 'A', '172.20.0.53'), rec(name, 'AAAA', 'fd42::53')];

describe('addresses of a zone’s own name servers', () => {
  it('names primary_ns as the apex name server while the zone lists none, else its @ NS targets (relative or absolute)', () => {
    expect(apexNameServers(zone([]))).to.deep.equal(['ns1.example.dn42']);
    expect(apexNameServers(zone([rec('@', 'NS', 'NS2'), rec('@', 'NS', 'ns.other.dn42.'), rec('@', 'NS', 'ns2.example.dn42.')]))).to.deep.equal([
      'ns2.example.dn42',
      'ns.other.dn42',
    ]);
  });

  it('gives an in-zone name server without an address the bind addresses, by family, once each', () => {
    expect(nameServerAddresses(zone([rec('www', 'A', '172.20.0.80')]), BIND)).to.deep.equal({ ok: true, records: added('ns1') });
    expect(nameServerAddresses(zone([]), ['172.20.0.53', '172.20.0.53'])).to.deep.equal({ ok: true, records: [rec('ns1', 'A', '172.20.0.53')] });
    // The zone's own name: at the apex.
    expect(nameServerAddresses(zone([], 'example.dn42'), BIND)).to.deep.equal({ ok: true, records: added('@') });
    // Every in-zone target of its @ NS records, a TXT at the name being no address.
    expect(nameServerAddresses(zone([rec('@', 'NS', 'a'), rec('@', 'NS', 'b.example.dn42.'), rec('a', 'TXT', '"x"')]), BIND)).to.deep.equal({
      ok: true,
      records: [...added('a'), ...added('b')],
    });
  });

  it('adds nothing for a name server with an address of its own (any case, either family), outside the zone, or below a delegation', () => {
    const none = { ok: true, records: [] };
    expect(nameServerAddresses(zone([rec('NS1', 'AAAA', 'fd42::54')]), BIND)).to.deep.equal(none);
    expect(nameServerAddresses(zone([], 'ns1.example.com'), [])).to.deep.equal(none);
    expect(nameServerAddresses(zone([], 'ns1.example.dn42.org'), [])).to.deep.equal(none);
    expect(nameServerAddresses(zone([rec('@', 'NS', 'ns.sub'), rec('sub', 'NS', 'ns.other.dn42.')]), [])).to.deep.equal(none);
    // primary_ns is no name server once the zone lists its own.
    expect(nameServerAddresses(zone([rec('@', 'NS', 'ns.other.dn42.')]), [])).to.deep.equal(none);
  });

  it('cannot help a name server that is a CNAME, or one without an address in a group without bind addresses', () => {
    expect(nameServerAddresses(zone([rec('ns1', 'CNAME', 'www')]), BIND)).to.deep.equal({
      ok: false,
      problem: 'name server ns1.example.dn42 is a CNAME; members leave the zone out until it is not',
    });
    expect(nameServerAddresses(zone([rec('www', 'A', '172.20.0.80')]), [])).to.deep.equal({
      ok: false,
      problem:
        'name server ns1.example.dn42 lies inside the zone and has no A or AAAA record, and the group has no bind address to give it; members leave the zone out until it has one',
    });
  });
});
