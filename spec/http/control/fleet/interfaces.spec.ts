import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { bgp, node, startFleet, wg, type FleetHarness } from './support.js';

describe('control: interfaces and BGP sessions', () => {
  let h: FleetHarness;
  beforeEach(async () => {
    h = await startFleet();
    await h.client.post('/admin/nodes', node('fra1'));
  });
  afterEach(async () => {
    await h.close();
  });

  it('creates interfaces (201), lists them by (sort_order, id), 409 on a duplicate name', async () => {
    const b = await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_b', 51801), sort_order: 5 });
    expectResponse(b).status(201);
    expect(b.body).to.deep.equal({
      id: b.body.id,
      node_id: 'fra1',
      peering_id: null,
      name: 'dn42_b',
      kind: 'wireguard',
      enabled: true,
      sort_order: 5,
      spec: wg('dn42_b', 51801),
    });
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51802), sort_order: 5 });
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_c', 51803), sort_order: 1 });
    const list = await h.client.get('/admin/nodes/fra1/interfaces');
    expect(list.body.map((i: { name: string }) => i.name)).to.deep.equal(['dn42_c', 'dn42_b', 'dn42_a']);
    expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_b', 51804) }))
      .status(409)
      .detail('interface dn42_b already exists on node fra1');
    expectResponse(await h.client.get('/admin/nodes/ghost/interfaces'))
      .status(404)
      .detail('unknown node ghost');
  });

  it('enforces the port policy: pool segment or the node range (422), one enabled interface per port (409)', async () => {
    expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_x', 51799) }))
      .status(422)
      .detail('wireguard listen_port must be inside node runtime.wireguard_port_range 51800-51830');
    await h.client.patch('/admin/nodes/fra1', { base_template: { runtime: { wireguard_port_range: '20000-20010' } } });
    expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_x', 51800) }))
      .status(422)
      .detail('wireguard listen_port must be inside node runtime.wireguard_port_range 20000-20010');
    expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 20000) })).status(201);
    expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_b', 20000) }))
      .status(409)
      .detail("wireguard listen_port 20000 is already used by interface 'dn42_a'");
    // A disabled interface holds no port.
    const off = await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_b', 20000), enabled: false });
    expectResponse(off).status(201);
    expectResponse(await h.client.patch(`/admin/interfaces/${off.body.id}`, { enabled: true })).status(409);
  });

  it('patches spec, enabled, sort_order and peering; clear_peering unlinks; a peering of another node is a 400', async () => {
    await h.client.post('/admin/nodes', node('ams1'));
    const mine = (await h.client.post('/admin/nodes/fra1/peerings', { name: 'p', remote_asn: 2 })).body;
    const theirs = (await h.client.post('/admin/nodes/ams1/peerings', { name: 'q', remote_asn: 2 })).body;
    const i = (await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51801) })).body;
    expectResponse(await h.client.patch(`/admin/interfaces/${i.id}`, { peering_id: mine.id, sort_order: 3 }))
      .status(200)
      .body({ peering_id: mine.id, sort_order: 3 });
    expectResponse(await h.client.patch(`/admin/interfaces/${i.id}`, { spec: wg('dn42_renamed', 51802) }))
      .status(200)
      .body({ name: 'dn42_renamed', peering_id: mine.id });
    expectResponse(await h.client.patch(`/admin/interfaces/${i.id}`, { clear_peering: true }))
      .status(200)
      .body({ peering_id: null });
    expectResponse(await h.client.patch(`/admin/interfaces/${i.id}`, { peering_id: theirs.id }))
      .status(400)
      .detail(`peering ${theirs.id} not on node fra1`);
    expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_z', 51803), peering_id: theirs.id }))
      .status(400)
      .detail(`peering ${theirs.id} not on node fra1`);
    expectResponse(await h.client.patch('/admin/interfaces/999999', { enabled: false }))
      .status(404)
      .detail('unknown interface 999999');
    expectResponse(await h.client.delete(`/admin/interfaces/${i.id}`)).status(204);
    expectResponse(await h.client.get(`/admin/interfaces/${i.id}`))
      .status(404)
      .detail(`unknown interface ${i.id}`);
  });

  it('creates, lists, patches and deletes BGP sessions with the contract statuses', async () => {
    const s2 = await h.client.post('/admin/nodes/fra1/bgp-sessions', { spec: bgp('s2', 4242420002), sort_order: 2 });
    expectResponse(s2).status(201);
    expect(s2.body).to.deep.equal({
      id: s2.body.id,
      node_id: 'fra1',
      peering_id: null,
      name: 's2',
      remote_asn: 4242420002,
      enabled: true,
      sort_order: 2,
      spec: bgp('s2', 4242420002),
    });
    const s1 = (await h.client.post('/admin/nodes/fra1/bgp-sessions', { spec: bgp('s1', 4242420003, { link_latency: 3 }) })).body;
    expect((await h.client.get('/admin/nodes/fra1/bgp-sessions')).body.map((s: { name: string }) => s.name)).to.deep.equal(['s1', 's2']);
    expectResponse(await h.client.post('/admin/nodes/fra1/bgp-sessions', { spec: bgp('s1', 1) }))
      .status(409)
      .detail('bgp session s1 already exists on node fra1');
    expectResponse(await h.client.post('/admin/nodes/fra1/bgp-sessions', { spec: bgp('s3', 1, { link_latency: 10 }) })).status(422);
    const off = await h.client.patch(`/admin/bgp-sessions/${s1.id}`, { spec: bgp('s1', 4242420003, { enabled: false }) });
    expectResponse(off).status(200).body({ enabled: false, remote_asn: 4242420003 });
    const state = (await h.client.get('/admin/nodes/fra1/desired-state')).body.state;
    expect(state.bgp_sessions.map((s: { name: string }) => s.name)).to.deep.equal(['s2']);
    expectResponse(await h.client.delete(`/admin/bgp-sessions/${s1.id}`)).status(204);
    expectResponse(await h.client.get(`/admin/bgp-sessions/${s1.id}`))
      .status(404)
      .detail(`unknown bgp session ${s1.id}`);
    expectResponse(await h.client.delete(`/admin/bgp-sessions/${s1.id}`)).status(404);
  });

  it('20 parallel creates on one listen_port: exactly one 201 and 19 × 409', async () => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, n) => h.client.post('/admin/nodes/fra1/interfaces', { spec: wg(`dn42_p${n}`, 51820) })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).to.have.length(1);
    expect(statuses.filter((s) => s === 409)).to.have.length(19);
    for (const r of results.filter((x) => x.status === 409))
      expect(r.body.detail).to.match(/^wireguard listen_port 51820 is already used by interface 'dn42_p\d+'$/);
    expect((await h.client.get('/admin/nodes/fra1/interfaces')).body).to.have.length(1);
  });

  it('20 parallel PATCHes of a published node yield strictly consecutive generations', async () => {
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51801) });
    const results = await Promise.all(Array.from({ length: 20 }, (_, n) => h.client.patch('/admin/nodes/fra1', { labels: { n } })));
    expect(results.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
    const generations = (await h.client.get('/admin/nodes/fra1/generations?limit=500')).body.generations.map((g: { generation: number }) => g.generation);
    expect(generations).to.deep.equal(Array.from({ length: 21 }, (_, i) => 21 - i));
    expect(h.sys.broadcaster.published.map((c) => c.generation).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: 21 }, (_, i) => i + 1));
  });
});
