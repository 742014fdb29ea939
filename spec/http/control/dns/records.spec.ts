import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { group, startFleet, zone, type FleetHarness } from './support.js';

describe('control: DNS records', () => {
  let h: FleetHarness;
  let g: number;
  let z: number;
  let base: string;
  beforeEach(async () => {
    h = await startFleet();
    g = await group(h.client, 'anycast');
    z = await zone(h.client, g, 'example.dn42');
    base = `/admin/dns-groups/${g}/zones/${z}/records`;
  });
  afterEach(async () => {
    await h.close();
  });

  it('creates a record (201) answering {record, zone} with record_count and the moved serial', async () => {
    const res = await h.client.post(base, { name: 'www', type: 'AAAA', content: 'FD42:0::80', ttl: 60, comment: 'web' });
    expectResponse(res).status(201);
    expect(res.body.record).to.deep.equal({
      id: res.body.record.id,
      group_id: g,
      zone_id: z,
      name: 'www',
      type: 'AAAA',
      content: 'fd42::80',
      ttl: 60,
      comment: 'web',
      enabled: true,
      sort_order: 0,
      created_at: '2026-11-01T12:00:00.000Z',
      updated_at: '2026-11-01T12:00:00.000Z',
    });
    expect(res.body.zone).to.deep.include({ id: z, record_count: 1, soa_serial: 2 });
  });

  it('lists records ordered by (sort_order, id)', async () => {
    const ids: Record<string, number> = {};
    for (const [name, sort_order] of [
      ['c', 5],
      ['a', 1],
      ['b', 5],
      ['d', -1],
    ] as const) {
      ids[name] = (await h.client.post(base, { name, type: 'A', content: '172.20.0.1', sort_order })).body.record.id;
    }
    const list = await h.client.get(base);
    expect(list.body.map((r: { name: string }) => r.name)).to.deep.equal(['d', 'a', 'c', 'b']);
    await h.client.patch(`${base}/${ids.b}`, { sort_order: 0 });
    expect((await h.client.get(base)).body.map((r: { name: string }) => r.name)).to.deep.equal(['d', 'b', 'a', 'c']);
  });

  it('validates content per type (422 in the contract shape), TXT is quoted, a CNAME conflict is 409', async () => {
    const cases: [string, string, string][] = [
      ['A', 'fd42::1', 'invalid A record content'],
      ['AAAA', '172.20.0.1', 'invalid AAAA record content'],
      ['MX', 'mail.example.dn42.', 'invalid MX record content'],
      ['SRV', '1 2 mail', 'invalid SRV record content'],
      ['CNAME', 'a b', 'invalid CNAME record content'],
      ['CAA', '0 issue x y', 'invalid CAA record content'],
    ];
    for (const [type, content, message] of cases) {
      const res = await h.client.post(base, { name: 'x', type, content });
      expectResponse(res).status(422);
      expect(res.body.detail.message).to.equal(message);
      expect(res.body.detail.errors[0]).to.deep.include({ loc: ['body', 'content'], type: 'dns_content' });
    }
    expectResponse(await h.client.post(base, { name: 'x', type: 'SPF', content: 'v=spf1' })).status(422);
    expectResponse(await h.client.post(base, { name: 'x.', type: 'A', content: '172.20.0.1' }))
      .status(422)
      .detail('invalid record name');
    // What named's check-names refuses in a primary zone never reaches the members.
    expectResponse(await h.client.post(base, { name: '_x', type: 'A', content: '172.20.0.1' }))
      .status(422)
      .detail('invalid record name');
    expectResponse(await h.client.post(base, { name: 'x', type: 'MX', content: '10 mail_x' }))
      .status(422)
      .detail('invalid MX record content');
    const txt = await h.client.post(base, { name: '@', type: 'TXT', content: 'v=spf1 -all' });
    expectResponse(txt).status(201);
    expect(txt.body.record.content).to.equal('"v=spf1 -all"');
    await h.client.post(base, { name: 'www', type: 'A', content: '172.20.0.80' });
    expectResponse(await h.client.post(base, { name: 'www', type: 'CNAME', content: 'other' }))
      .status(409)
      .detail('dns record www in zone example.dn42: a CNAME cannot share its name with other records');
    expect((await h.client.get(base)).body).to.have.length(2);
  });

  it('PATCH re-checks type and content together and answers {record, zone}', async () => {
    const id = (await h.client.post(base, { name: 'www', type: 'A', content: '172.20.0.80' })).body.record.id;
    expectResponse(await h.client.patch(`${base}/${id}`, { type: 'AAAA' }))
      .status(422)
      .detail('invalid AAAA record content');
    const res = await h.client.patch(`${base}/${id}`, { type: 'AAAA', content: 'fd42::80', enabled: false });
    expectResponse(res).status(200);
    expect(res.body.record).to.deep.include({ id, type: 'AAAA', content: 'fd42::80', enabled: false, name: 'www' });
    expect(res.body.zone).to.deep.include({ id: z, record_count: 1, soa_serial: 3 });
  });

  it('DELETE answers 200 with {record: null, zone} and the refreshed record_count', async () => {
    const a = (await h.client.post(base, { name: 'a', type: 'A', content: '172.20.0.1' })).body.record.id;
    await h.client.post(base, { name: 'b', type: 'A', content: '172.20.0.2' });
    const res = await h.client.delete(`${base}/${a}`);
    expectResponse(res).status(200);
    expect(res.body.record).to.equal(null);
    expect(res.body.zone).to.deep.include({ id: z, record_count: 1, soa_serial: 4 });
  });

  it('answers 404 for unknown groups, zones and records, and a record of another zone', async () => {
    const other = await zone(h.client, g, 'other.dn42');
    const foreign = (await h.client.post(`/admin/dns-groups/${g}/zones/${other}/records`, { name: 'a', type: 'A', content: '172.20.0.1' })).body.record.id;
    expectResponse(await h.client.patch(`${base}/${foreign}`, { ttl: 5 }))
      .status(404)
      .detail(`unknown dns record ${foreign}`);
    expectResponse(await h.client.delete(`${base}/777777`))
      .status(404)
      .detail('unknown dns record 777777');
    expectResponse(await h.client.get(`/admin/dns-groups/${g}/zones/777777/records`))
      .status(404)
      .detail('unknown dns zone 777777');
    expectResponse(await h.client.post(`/admin/dns-groups/${g}/zones/777777/records`, { name: 'a', type: 'A', content: '172.20.0.1' }))
      .status(404)
      .detail('unknown dns zone 777777');
    expectResponse(await h.client.post(`/admin/dns-groups/999/zones/${z}/records`, { name: 'a', type: 'A', content: '172.20.0.1' }))
      .status(404)
      .detail('unknown dns group 999');
  });
});
