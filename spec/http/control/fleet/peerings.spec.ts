import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { bgp, node, startFleet, wg, type FleetHarness } from './support.js';

describe('control: peerings', () => {
  let h: FleetHarness;
  beforeEach(async () => {
    h = await startFleet();
    await h.client.post('/admin/nodes', node('fra1'));
    await h.client.post('/admin/nodes', node('ams1', { router_id: '172.20.0.2', loopback_ipv4: '172.20.0.2', link_local: 'fe80::3' }));
  });
  afterEach(async () => {
    await h.close();
  });

  it('creates peerings (201), lists them by name with remote_as_name null without a registry, 409 on a duplicate name', async () => {
    const b = await h.client.post('/admin/nodes/fra1/peerings', { name: 'zeta', remote_asn: 4242420002 });
    expectResponse(b).status(201);
    expect(b.body).to.deep.include({
      local_node_id: 'fra1',
      name: 'zeta',
      remote_asn: 4242420002,
      remote_node_id: null,
      remote_label: null,
      is_internal: false,
      enabled: true,
      notes: null,
    });
    expect(b.body.id).to.be.a('number');
    await h.client.post('/admin/nodes/fra1/peerings', { name: 'alpha', remote_asn: 4242420003 });
    const list = await h.client.get('/admin/nodes/fra1/peerings');
    expect(list.body.map((p: { name: string }) => p.name)).to.deep.equal(['alpha', 'zeta']);
    expect(list.body.every((p: { remote_as_name: unknown }) => p.remote_as_name === null)).to.equal(true);
    expectResponse(await h.client.post('/admin/nodes/fra1/peerings', { name: 'zeta', remote_asn: 1 }))
      .status(409)
      .detail('peering zeta already exists on node fra1');
    // The same name on another node is fine.
    expectResponse(await h.client.post('/admin/nodes/ams1/peerings', { name: 'zeta', remote_asn: 1 })).status(201);
  });

  it('answers 400 for an unknown remote_node_id and 404 for an unknown node', async () => {
    expectResponse(await h.client.post('/admin/nodes/fra1/peerings', { name: 'x', remote_asn: 1, remote_node_id: 'ghost', is_internal: true }))
      .status(400)
      .detail('unknown node ghost');
    expectResponse(await h.client.post('/admin/nodes/ghost/peerings', { name: 'x', remote_asn: 1 }))
      .status(404)
      .detail('unknown node ghost');
    expectResponse(await h.client.post('/admin/nodes/fra1/peerings', { name: '', remote_asn: 1 })).status(422);
    expectResponse(await h.client.post('/admin/nodes/fra1/peerings', { name: 'x'.repeat(65), remote_asn: 1 })).status(422);
  });

  it('reads, patches and deletes one peering; deleting takes its interface and sessions along', async () => {
    const p = (await h.client.post('/admin/nodes/fra1/peerings', { name: 'p1', remote_asn: 4242420002 })).body;
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_peer', 51801), peering_id: p.id });
    await h.client.post('/admin/nodes/fra1/bgp-sessions', { spec: bgp('dn42_peer', 4242420002), peering_id: p.id });
    expectResponse(await h.client.get(`/admin/peerings/${p.id}`))
      .status(200)
      .body({ name: 'p1' });
    expectResponse(await h.client.patch(`/admin/peerings/${p.id}`, { notes: 'hello', enabled: false }))
      .status(200)
      .body({ notes: 'hello', enabled: false, name: 'p1' });
    expectResponse(await h.client.patch(`/admin/peerings/${p.id}`, { remote_node_id: 'ghost' }))
      .status(400)
      .detail('unknown node ghost');
    expectResponse(await h.client.delete(`/admin/peerings/${p.id}`)).status(204);
    expectResponse(await h.client.get(`/admin/peerings/${p.id}`))
      .status(404)
      .detail(`unknown peering ${p.id}`);
    expect((await h.client.get('/admin/nodes/fra1/interfaces')).body).to.deep.equal([]);
    expect((await h.client.get('/admin/nodes/fra1/bgp-sessions')).body).to.deep.equal([]);
    expectResponse(await h.client.delete(`/admin/peerings/${p.id}`)).status(404);
    expectResponse(await h.client.patch('/admin/peerings/999999', { notes: 'x' }))
      .status(404)
      .detail('unknown peering 999999');
  });

  it('provisions a peering, interface and sessions in one generation; both bgp_spec and bgp_specs is a 422', async () => {
    const res = await h.client.post('/admin/nodes/fra1/peerings/provision', {
      peering: { name: 'p1', remote_asn: 4242420002 },
      interface_spec: wg('dn42_peer', 51801),
      bgp_specs: [bgp('dn42_peer_v6', 4242420002), bgp('dn42_peer_v4', 4242420002, { neighbor_address: '172.20.1.1', interface: null })],
    });
    expectResponse(res).status(201);
    expect(res.body.generation).to.equal(1);
    expect(res.body.peering.name).to.equal('p1');
    expect(res.body.interface).to.deep.include({ name: 'dn42_peer', peering_id: res.body.peering.id, enabled: true, kind: 'wireguard' });
    expect(res.body.sessions.map((s: { name: string }) => s.name)).to.deep.equal(['dn42_peer_v6', 'dn42_peer_v4']);
    expect(res.body.bgp_session).to.deep.equal(res.body.sessions[0]);
    expect(h.sys.broadcaster.published.map((c) => c.generation)).to.deep.equal([1]);

    const both = await h.client.post('/admin/nodes/fra1/peerings/provision', {
      peering: { name: 'p2', remote_asn: 1 },
      interface_spec: wg('dn42_p2', 51802),
      bgp_spec: bgp('p2', 1),
      bgp_specs: [bgp('p2b', 1)],
    });
    expectResponse(both).status(422);
  });

  it('a failed provision leaves no peering, interface, session or generation behind', async () => {
    await h.client.post('/admin/nodes/fra1/peerings/provision', {
      peering: { name: 'p1', remote_asn: 2 },
      interface_spec: wg('dn42_a', 51801),
      bgp_spec: bgp('s1', 2),
    });
    const before = {
      peerings: (await h.client.get('/admin/nodes/fra1/peerings')).body,
      interfaces: (await h.client.get('/admin/nodes/fra1/interfaces')).body,
      sessions: (await h.client.get('/admin/nodes/fra1/bgp-sessions')).body,
      generations: (await h.client.get('/admin/nodes/fra1/generations')).body,
    };
    // Duplicate interface name: the peering and session of this request must not stay.
    const dup = await h.client.post('/admin/nodes/fra1/peerings/provision', {
      peering: { name: 'p2', remote_asn: 3 },
      interface_spec: wg('dn42_a', 51802),
      bgp_spec: bgp('s2', 3),
    });
    expectResponse(dup).status(409).detail('interface dn42_a already exists on node fra1');
    // Port in use.
    expectResponse(
      await h.client.post('/admin/nodes/fra1/peerings/provision', {
        peering: { name: 'p3', remote_asn: 3 },
        interface_spec: wg('dn42_c', 51801),
        bgp_spec: bgp('s3', 3),
      }),
    ).status(409);
    // Duplicate session name.
    expectResponse(
      await h.client.post('/admin/nodes/fra1/peerings/provision', {
        peering: { name: 'p4', remote_asn: 3 },
        interface_spec: wg('dn42_d', 51803),
        bgp_spec: bgp('s1', 3),
      }),
    ).status(409);
    const after = {
      peerings: (await h.client.get('/admin/nodes/fra1/peerings')).body,
      interfaces: (await h.client.get('/admin/nodes/fra1/interfaces')).body,
      sessions: (await h.client.get('/admin/nodes/fra1/bgp-sessions')).body,
      generations: (await h.client.get('/admin/nodes/fra1/generations')).body,
    };
    expect(after).to.deep.equal(before);
  });

  it('GET full lists peerings with their interfaces and sessions', async () => {
    const res = (
      await h.client.post('/admin/nodes/fra1/peerings/provision', {
        peering: { name: 'p1', remote_asn: 2 },
        interface_spec: wg('dn42_a', 51801),
        bgp_spec: bgp('s1', 2),
      })
    ).body;
    const full = await h.client.get('/admin/nodes/fra1/peerings/full');
    expect(full.body).to.have.length(1);
    expect(full.body[0].interfaces.map((i: { id: number }) => i.id)).to.deep.equal([res.interface.id]);
    expect(full.body[0].bgp_sessions.map((s: { id: number }) => s.id)).to.deep.equal([res.bgp_session.id]);
    const one = await h.client.get(`/admin/peerings/${res.peering.id}/full`);
    expect(one.body).to.deep.equal(full.body[0]);
    expectResponse(await h.client.get('/admin/peerings/424242/full')).status(404);
  });

  it('PUT full creates by name, then replaces the child sets', async () => {
    const first = await h.client.put('/admin/nodes/fra1/peerings/full', {
      peering: { name: 'p1', remote_asn: 2 },
      interfaces: [{ spec: wg('dn42_a', 51801) }],
      bgp_sessions: [{ spec: bgp('s1', 2) }, { spec: bgp('s2', 2), sort_order: 1 }],
    });
    expectResponse(first).status(200);
    expect(first.body.generation).to.equal(1);
    expect(first.body.peering.bgp_sessions.map((s: { name: string }) => s.name)).to.deep.equal(['s1', 's2']);
    const second = await h.client.put('/admin/nodes/fra1/peerings/full', {
      peering: { name: 'p1', remote_asn: 2, notes: 'replaced' },
      interfaces: [{ spec: wg('dn42_a', 51801, { mtu: 1280 }) }],
      bgp_sessions: [{ spec: bgp('s3', 2) }],
    });
    expectResponse(second).status(200);
    expect(second.body.generation).to.equal(2);
    expect(second.body.peering.id).to.equal(first.body.peering.id);
    expect(second.body.peering.notes).to.equal('replaced');
    expect(second.body.peering.interfaces[0].spec.mtu).to.equal(1280);
    expect((await h.client.get('/admin/nodes/fra1/bgp-sessions')).body.map((s: { name: string }) => s.name)).to.deep.equal(['s3']);
  });

  it('backfill folds orphan interfaces and sessions into peerings; dry_run only plans', async () => {
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_peer', 51801) });
    await h.client.post('/admin/nodes/fra1/bgp-sessions', { spec: bgp('dn42_peer_v6', 4242420002) });
    await h.client.post('/admin/nodes/fra1/bgp-sessions', {
      spec: bgp('collector', 4242422602, { interface: null, neighbor_address: 'fd42:4242:2601:ac12::1', policy: 'route_collector' }),
    });
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('lonely', 51802) });
    const gen = (await h.client.get('/admin/nodes/fra1')).body.current_generation;

    const plan = await h.client.post('/admin/nodes/fra1/peerings/backfill', { dry_run: true });
    expectResponse(plan).status(200).body({ dry_run: true, generation: null });
    expect(plan.body.peerings.map((p: { name: string; remote_asn: number; create: boolean }) => [p.name, p.remote_asn, p.create])).to.deep.equal([
      ['dn42_peer', 4242420002, true],
      ['collector', 4242422602, true],
    ]);
    expect(plan.body.skipped.map((s: { name: string }) => s.name)).to.deep.equal(['lonely']);
    expect((await h.client.get('/admin/nodes/fra1/peerings')).body).to.deep.equal([]);
    expect((await h.client.get('/admin/nodes/fra1')).body.current_generation).to.equal(gen);

    const run = await h.client.post('/admin/nodes/fra1/peerings/backfill', {});
    expectResponse(run)
      .status(200)
      .body({ dry_run: false, generation: gen + 1 });
    const full = (await h.client.get('/admin/nodes/fra1/peerings/full')).body;
    expect(
      full.map((p: { name: string; interfaces: unknown[]; bgp_sessions: unknown[] }) => [p.name, p.interfaces.length, p.bgp_sessions.length]),
    ).to.deep.equal([
      ['collector', 0, 1],
      ['dn42_peer', 1, 1],
    ]);
    // Nothing left to fold: a second run changes nothing.
    const again = await h.client.post('/admin/nodes/fra1/peerings/backfill', {});
    expectResponse(again).status(200).body({ peerings: [], generation: null });
  });

  it('an internal peering re-materialises both nodes in one append', async () => {
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51801) });
    await h.client.post('/admin/nodes/ams1/interfaces', { spec: wg('dn42_b', 51801) });
    h.sys.broadcaster.calls.length = 0;
    const res = await h.client.post('/admin/nodes/fra1/peerings', { name: 'to-ams', remote_asn: 4242420001, remote_node_id: 'ams1', is_internal: true });
    expectResponse(res).status(201);
    expect(h.sys.broadcaster.published.map((c) => [c.node_id, c.generation])).to.deep.equal([
      ['fra1', 2],
      ['ams1', 2],
    ]);
    const ams = (await h.client.get('/admin/nodes/ams1/desired-state')).body.state;
    expect(ams.bird.internal_topology.routers.map((r: { node_id: string }) => r.node_id)).to.deep.equal(['fra1']);
    const fra = (await h.client.get('/admin/nodes/fra1/desired-state')).body.state;
    expect(fra.bird.internal_topology.routers.map((r: { node_id: string }) => r.node_id)).to.deep.equal(['ams1']);
    // Changing a fact of ams1 that fra1 materialises from re-publishes fra1 as well.
    h.sys.broadcaster.calls.length = 0;
    await h.client.patch('/admin/nodes/ams1', { loopback_ipv4: '172.20.0.22' });
    expect(h.sys.broadcaster.calls.map((c) => c.node_id).sort()).to.deep.equal(['ams1', 'fra1']);
  });
});
