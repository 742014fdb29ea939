import { expect } from 'chai';
import { ZONE_SOA_DEFAULTS } from '../../../support/dns.js';
import { expectResponse } from '../../../support/http.js';
import { group, startFleet, zone, type FleetHarness } from './support.js';

describe('control: DNS zones', () => {
  let h: FleetHarness;
  let g: number;
  beforeEach(async () => {
    h = await startFleet();
    g = await group(h.client, 'anycast');
  });
  afterEach(async () => {
    await h.close();
  });

  it('creates a zone with SOA defaults (201) and answers {zone, group} with the refreshed counts', async () => {
    const res = await h.client.post(`/admin/dns-groups/${g}/zones`, { zone: 'Example.DN42.' });
    expectResponse(res).status(201);
    expect(res.body.zone).to.deep.equal({
      id: res.body.zone.id,
      group_id: g,
      zone: 'example.dn42',
      primary_ns: null,
      admin_email: null,
      soa_serial: 1,
      ...ZONE_SOA_DEFAULTS,
      enabled: true,
      record_count: 0,
      // ns1.example.dn42 has no address record, but the group's bind address stands in for it.
      name_server_problem: null,
      created_at: '2026-11-01T12:00:00.000Z',
      updated_at: '2026-11-01T12:00:00.000Z',
    });
    expect(res.body.group).to.deep.include({ id: g, name: 'anycast', zone_count: 1 });
  });

  it('accepts RFC 2317 classless names and lists zones by name', async () => {
    await zone(h.client, g, 'zzz.dn42');
    await zone(h.client, g, '0/26.2.0.192.in-addr.arpa', { primary_ns: 'ns1.example.dn42.', admin_email: 'ops@Example.dn42' });
    const list = await h.client.get(`/admin/dns-groups/${g}/zones`);
    expect(list.body.map((z: { zone: string; primary_ns: string | null; admin_email: string | null }) => [z.zone, z.primary_ns, z.admin_email])).to.deep.equal([
      ['0/26.2.0.192.in-addr.arpa', 'ns1.example.dn42', 'ops@example.dn42'],
      ['zzz.dn42', null, null],
    ]);
  });

  it('refuses invalid zone names and fields (422) and a duplicate in the group (409), not in another group', async () => {
    for (const bad of ['a..dn42', '-x.dn42', 'with space.dn42', '/26.2.0.192.in-addr.arpa']) {
      const res = await h.client.post(`/admin/dns-groups/${g}/zones`, { zone: bad });
      expectResponse(res).status(422).detail('invalid zone name');
      expect(res.body.detail.errors[0].loc).to.deep.equal(['body', 'zone']);
    }
    expectResponse(await h.client.post(`/admin/dns-groups/${g}/zones`, { zone: 'ok.dn42', admin_email: 'nobody' }))
      .status(422)
      .detail('invalid dns zone');
    expectResponse(await h.client.post(`/admin/dns-groups/${g}/zones`, { zone: 'ok.dn42', soa_refresh: 0 })).status(422);
    expectResponse(await h.client.post(`/admin/dns-groups/${g}/zones`, { zone: 'ok.dn42', soa_serial: 5 })).status(422);
    await zone(h.client, g, 'example.dn42');
    expectResponse(await h.client.post(`/admin/dns-groups/${g}/zones`, { zone: 'EXAMPLE.dn42' }))
      .status(409)
      .detail(`dns zone example.dn42 already exists in group ${g}`);
    const other = await group(h.client, 'other');
    await zone(h.client, other, 'example.dn42');
    expectResponse(await h.client.post('/admin/dns-groups/999/zones', { zone: 'x.dn42' }))
      .status(404)
      .detail('unknown dns group 999');
  });

  it('PATCH updates the zone, moves its serial on, and answers {zone, group}; a rename onto another zone is 409', async () => {
    const id = await zone(h.client, g, 'example.dn42');
    await zone(h.client, g, 'taken.dn42');
    const res = await h.client.patch(`/admin/dns-groups/${g}/zones/${id}`, { default_ttl: 60, enabled: false });
    expectResponse(res).status(200);
    expect(res.body.zone).to.deep.include({ zone: 'example.dn42', default_ttl: 60, enabled: false, soa_serial: 2, soa_refresh: 3600 });
    expect(res.body.group).to.deep.include({ id: g, zone_count: 2 });
    expectResponse(await h.client.patch(`/admin/dns-groups/${g}/zones/${id}`, { zone: 'taken.dn42' })).status(409);
    expectResponse(await h.client.patch(`/admin/dns-groups/${g}/zones/${id}`, { primary_ns: null })).status(200);
  });

  it('DELETE answers 200 with {zone: null, group} and takes the records along', async () => {
    const id = await zone(h.client, g, 'example.dn42');
    await zone(h.client, g, 'other.dn42');
    await h.client.post(`/admin/dns-groups/${g}/zones/${id}/records`, { name: 'www', type: 'A', content: '172.20.0.80' });
    const res = await h.client.delete(`/admin/dns-groups/${g}/zones/${id}`);
    expectResponse(res).status(200);
    expect(res.body.zone).to.equal(null);
    expect(res.body.group).to.deep.include({ id: g, zone_count: 1 });
    expectResponse(await h.client.get(`/admin/dns-groups/${g}/zones/${id}/records`))
      .status(404)
      .detail(`unknown dns zone ${id}`);
    expect((await h.sys.pool.query(`SELECT count(*)::int AS n FROM dns_records`)).rows[0].n).to.equal(0);
  });

  it('answers 404 for an unknown zone, or a zone of another group', async () => {
    const other = await group(h.client, 'other');
    const foreign = await zone(h.client, other, 'foreign.dn42');
    expectResponse(await h.client.patch(`/admin/dns-groups/${g}/zones/${foreign}`, { enabled: false }))
      .status(404)
      .detail(`unknown dns zone ${foreign}`);
    expectResponse(await h.client.delete(`/admin/dns-groups/${g}/zones/424242`))
      .status(404)
      .detail('unknown dns zone 424242');
    expectResponse(await h.client.delete(`/admin/dns-groups/999/zones/${foreign}`))
      .status(404)
      .detail('unknown dns group 999');
  });
});
