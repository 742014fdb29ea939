import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { group, node, startFleet, zone, type FleetHarness } from './support.js';

describe('control: DNS groups', () => {
  let h: FleetHarness;
  beforeEach(async () => {
    h = await startFleet();
  });
  afterEach(async () => {
    await h.close();
  });

  it('creates a group with defaults (201), reads it with counts, lists groups by name', async () => {
    const res = await h.client.post('/admin/dns-groups', {
      name: 'zeta',
      bind_addresses: ['172.20.0.53', 'FD42::0:53'],
      forwards: [{ zone: 'DN42.', upstreams: ['172.20.0.1'] }],
    });
    expectResponse(res).status(201);
    expect(res.body).to.deep.equal({
      id: res.body.id,
      name: 'zeta',
      bind_addresses: ['172.20.0.53', 'fd42::53'],
      cache_ttl_seconds: 300,
      forwards: [{ zone: 'dn42', upstreams: ['172.20.0.1'] }],
      enabled: true,
      zone_count: 0,
      member_count: 0,
      created_at: '2026-11-01T12:00:00.000Z',
      updated_at: '2026-11-01T12:00:00.000Z',
    });
    await group(h.client, 'alpha', { bind_addresses: [], cache_ttl_seconds: 60, enabled: false });
    expectResponse(await h.client.get(`/admin/dns-groups/${res.body.id}`))
      .status(200)
      .body({ name: 'zeta', zone_count: 0 });
    const list = await h.client.get('/admin/dns-groups');
    expect(list.body.map((g: { name: string; cache_ttl_seconds: number; enabled: boolean }) => [g.name, g.cache_ttl_seconds, g.enabled])).to.deep.equal([
      ['alpha', 60, false],
      ['zeta', 300, true],
    ]);
  });

  it('refuses a duplicate name on create and on rename (409); a rename frees the old name', async () => {
    const a = await group(h.client, 'anycast');
    const b = await group(h.client, 'backup');
    expectResponse(await h.client.post('/admin/dns-groups', { name: 'anycast' }))
      .status(409)
      .detail('dns group anycast already exists');
    expectResponse(await h.client.patch(`/admin/dns-groups/${b}`, { name: 'anycast' }))
      .status(409)
      .detail('dns group anycast already exists');
    expectResponse(await h.client.patch(`/admin/dns-groups/${a}`, { name: 'primary' }))
      .status(200)
      .body({ id: a, name: 'primary' });
    expectResponse(await h.client.post('/admin/dns-groups', { name: 'anycast' })).status(201);
    // Renaming to its own name changes nothing about the claim.
    expectResponse(await h.client.patch(`/admin/dns-groups/${a}`, { name: 'primary', cache_ttl_seconds: 30 }))
      .status(200)
      .body({ name: 'primary', cache_ttl_seconds: 30 });
  });

  it('PATCH changes only the given fields', async () => {
    const id = await group(h.client, 'anycast', { forwards: [{ zone: 'dn42', upstreams: ['172.20.0.1'] }] });
    h.sys.clock.advance(5000);
    const res = await h.client.patch(`/admin/dns-groups/${id}`, { bind_addresses: ['fd42::53'], enabled: false });
    expectResponse(res)
      .status(200)
      .body({
        name: 'anycast',
        bind_addresses: ['fd42::53'],
        forwards: [{ zone: 'dn42', upstreams: ['172.20.0.1'] }],
        enabled: false,
        cache_ttl_seconds: 300,
        updated_at: '2026-11-01T12:00:05.000Z',
      });
  });

  it('answers 422 in the contract shape for schema failures and bad addresses', async () => {
    const missing = await h.client.post('/admin/dns-groups', { bind_addresses: [] });
    expectResponse(missing).status(422);
    expect(missing.body.detail.errors[0].loc).to.deep.equal(['body', 'name']);
    const unknownField = await h.client.post('/admin/dns-groups', { name: 'x', colour: 'red' });
    expect(unknownField.body.detail.errors[0].loc).to.deep.equal(['body', 'colour']);
    expectResponse(await h.client.post('/admin/dns-groups', { name: 'x', cache_ttl_seconds: -1 })).status(422);
    const bad = await h.client.post('/admin/dns-groups', {
      name: 'x',
      bind_addresses: ['172.20.0.1', 'not-an-ip'],
      forwards: [{ zone: 'dn42', upstreams: [] }],
    });
    expectResponse(bad).status(422);
    const addr = await h.client.post('/admin/dns-groups', { name: 'x', bind_addresses: ['172.20.0.1', 'not-an-ip'] });
    expectResponse(addr).status(422).detail('invalid dns group');
    expect(addr.body.detail.errors).to.deep.equal([{ loc: ['body', 'bind_addresses', 1], msg: 'not an IP address', type: 'ip_address' }]);
    expectResponse(await h.client.patch(`/admin/dns-groups/${await group(h.client, 'ok')}`, { forwards: [{ zone: 'a..b', upstreams: ['::1'] }] }))
      .status(422)
      .detail('invalid dns group');
    // Nothing was created by the refused requests.
    expect((await h.client.get('/admin/dns-groups')).body.map((g: { name: string }) => g.name)).to.deep.equal(['ok']);
  });

  it('answers 404 for unknown groups on every route', async () => {
    expectResponse(await h.client.get('/admin/dns-groups/999'))
      .status(404)
      .detail('unknown dns group 999');
    expectResponse(await h.client.patch('/admin/dns-groups/999', { enabled: false }))
      .status(404)
      .detail('unknown dns group 999');
    expectResponse(await h.client.delete('/admin/dns-groups/999'))
      .status(404)
      .detail('unknown dns group 999');
    expectResponse(await h.client.get('/admin/dns-groups/999/zones'))
      .status(404)
      .detail('unknown dns group 999');
    expectResponse(await h.client.get('/admin/dns-groups/abc')).status(422);
  });

  it('counts zones and members; delete answers 204, the name is free again and members get dns_group_id null', async () => {
    const id = await group(h.client, 'anycast');
    await zone(h.client, id, 'a.dn42');
    await zone(h.client, id, 'b.dn42');
    for (const n of ['fra1', 'ams1']) {
      await h.client.post('/admin/nodes', node(n));
      expectResponse(await h.client.put(`/admin/nodes/${n}/dns-group`, { dns_group_id: id }))
        .status(200)
        .body({ dns_group_id: id });
    }
    expectResponse(await h.client.get(`/admin/dns-groups/${id}`))
      .status(200)
      .body({ zone_count: 2, member_count: 2 });
    expectResponse(await h.client.delete(`/admin/dns-groups/${id}`)).status(204);
    expectResponse(await h.client.get(`/admin/dns-groups/${id}`)).status(404);
    expectResponse(await h.client.get(`/admin/dns-groups/${id}/zones`)).status(404);
    for (const n of ['fra1', 'ams1'])
      expectResponse(await h.client.get(`/admin/nodes/${n}`))
        .status(200)
        .body({ dns_group_id: null });
    expectResponse(await h.client.post('/admin/dns-groups', { name: 'anycast' })).status(201);
    const rows = await h.sys.pool.query(`SELECT count(*)::int AS n FROM dns_zones`);
    expect(rows.rows[0].n).to.equal(0);
  });
});
