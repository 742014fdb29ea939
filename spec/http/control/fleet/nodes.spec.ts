import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { node, startFleet, wg, type FleetHarness } from './support.js';

describe('control: nodes', () => {
  let h: FleetHarness;
  beforeEach(async () => {
    h = await startFleet();
  });
  afterEach(async () => {
    await h.close();
  });

  it('creates a node (201) with every NodeOut field and refuses a duplicate with 409', async () => {
    const res = await h.client.post('/admin/nodes', node('fra1'));
    expectResponse(res).status(201);
    expect(res.body).to.deep.equal({
      ...node('fra1'),
      inventory: {},
      labels: {},
      base_template: {},
      current_generation: 0,
      lifecycle: 'active',
      dns_group_id: null,
      wireguard_public_key: null,
      created_at: '2026-11-01T12:00:00.000Z',
      updated_at: '2026-11-01T12:00:00.000Z',
    });
    expectResponse(await h.client.post('/admin/nodes', node('fra1')))
      .status(409)
      .detail('node fra1 already exists');
  });

  it('lists nodes ordered by node_id and answers 404 for an unknown one', async () => {
    for (const id of ['zrh1', 'ams1', 'fra1']) await h.client.post('/admin/nodes', node(id));
    const list = await h.client.get('/admin/nodes');
    expect(list.body.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['ams1', 'fra1', 'zrh1']);
    expectResponse(await h.client.get('/admin/nodes/nope'))
      .status(404)
      .detail('unknown node nope');
    expectResponse(await h.client.patch('/admin/nodes/nope', { site: 'x' }))
      .status(404)
      .detail('unknown node nope');
  });

  it('validates link_local: fe80::/10 without a zone, else 422', async () => {
    for (const bad of ['fd00::1', 'fe80::1%eth0', 'not-an-ip', '169.254.0.1']) {
      const res = await h.client.post('/admin/nodes', node('bad', { link_local: bad }));
      expectResponse(res).status(422);
      expect(JSON.stringify(res.body.detail.errors)).to.contain('link_local');
    }
    expectResponse(await h.client.post('/admin/nodes', node('ok', { link_local: 'febf::1' }))).status(201);
    expectResponse(await h.client.patch('/admin/nodes/ok', { link_local: 'fe80::1%wg0' })).status(422);
  });

  it('refuses a base_template that could never materialise (422 invalid base_template)', async () => {
    const res = await h.client.post('/admin/nodes', node('t1', { base_template: { runtime: { wireguard_port_range: '9000-100' } } }));
    expectResponse(res).status(422).detail('invalid base_template');
    expect(res.body.detail.errors[0].loc).to.deep.equal(['body', 'base_template', 'runtime', 'wireguard_port_range']);
    await h.client.post('/admin/nodes', node('t1'));
    expectResponse(await h.client.patch('/admin/nodes/t1', { base_template: { bird: { internal_topology: { private_nodes: [] } } } }))
      .status(422)
      .detail('invalid base_template');
    expectResponse(
      await h.client.patch('/admin/nodes/t1', {
        base_template: { bird: { internal_topology: { routers: ['ams1'] } }, runtime: { wireguard_port_range: [20000, 20100] } },
      }),
    ).status(200);
  });

  it('rejects unknown fields and bad types with 422 field errors', async () => {
    const res = await h.client.post('/admin/nodes', { ...node('x'), colour: 'red' });
    expectResponse(res).status(422);
    expect(res.body.detail.errors[0].loc).to.deep.equal(['body', 'colour']);
    expectResponse(await h.client.post('/admin/nodes', node('x', { asn: 0 }))).status(422);
    expectResponse(await h.client.post('/admin/nodes', node('x'.repeat(65)))).status(422);
    expectResponse(await h.client.post('/admin/nodes', node('x', { router_id: 'fra1.example' })))
      .status(422)
      .detail('invalid router_id');
  });

  it('PATCH leaves omitted fields unchanged and does not publish a never-published node', async () => {
    await h.client.post('/admin/nodes', node('fra1'));
    h.sys.clock.advance(1000);
    const res = await h.client.patch('/admin/nodes/fra1', { site: 'ber', labels: { tier: 'edge' } });
    expectResponse(res)
      .status(200)
      .body({ site: 'ber', labels: { tier: 'edge' }, router_id: '172.20.0.1', current_generation: 0, updated_at: '2026-11-01T12:00:01.000Z' });
    expect(h.sys.broadcaster.calls).to.deep.equal([]);
  });

  it('PATCH re-materialises a published node in the same append and rings the doorbell', async () => {
    await h.client.post('/admin/nodes', node('fra1'));
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51800) });
    const res = await h.client.patch('/admin/nodes/fra1', { router_id: '172.20.0.9' });
    expectResponse(res).status(200).body({ current_generation: 2 });
    const state = await h.client.get('/admin/nodes/fra1/desired-state');
    expect(state.body.generation).to.equal(2);
    expect(state.body.state.node.router_id).to.equal('172.20.0.9');
    expect(h.sys.broadcaster.published.map((c) => [c.node_id, c.generation])).to.deep.equal([
      ['fra1', 1],
      ['fra1', 2],
    ]);
  });

  it('deletes a never-published node (204) but refuses a live published one (409) until decommissioned', async () => {
    await h.client.post('/admin/nodes', node('new1'));
    expectResponse(await h.client.delete('/admin/nodes/new1')).status(204);
    expectResponse(await h.client.get('/admin/nodes/new1')).status(404);

    await h.client.post('/admin/nodes', node('fra1'));
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51800) });
    expectResponse(await h.client.delete('/admin/nodes/fra1'))
      .status(409)
      .detail(/^node fra1 is live; /);

    const dec = await h.client.post('/admin/nodes/fra1/decommission');
    expectResponse(dec).status(200).body({ lifecycle: 'decommissioned', current_generation: 2 });
    const empty = await h.client.get('/admin/nodes/fra1/desired-state');
    expect(empty.body.state.interfaces).to.deep.equal([]);
    expect(empty.body.state.bgp_sessions).to.deep.equal([]);
    // Rows are kept while decommissioned.
    expect((await h.client.get('/admin/nodes/fra1/interfaces')).body).to.have.length(1);
    expectResponse(await h.client.delete('/admin/nodes/fra1')).status(204);
    expectResponse(await h.client.get('/admin/nodes/fra1/interfaces')).status(404);
  });

  it('recommission re-materialises; repeating either transition is a 409', async () => {
    await h.client.post('/admin/nodes', node('fra1'));
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51800) });
    await h.client.post('/admin/nodes/fra1/decommission');
    expectResponse(await h.client.post('/admin/nodes/fra1/decommission'))
      .status(409)
      .detail('node fra1 is already decommissioned');
    const rec = await h.client.post('/admin/nodes/fra1/recommission');
    expectResponse(rec).status(200).body({ lifecycle: 'active', current_generation: 3 });
    const state = await h.client.get('/admin/nodes/fra1/desired-state');
    expect(state.body.state.interfaces.map((i: { name: string }) => i.name)).to.deep.equal(['dn42_a']);
    expectResponse(await h.client.post('/admin/nodes/fra1/recommission'))
      .status(409)
      .detail('node fra1 is not decommissioned');
    expectResponse(await h.client.post('/admin/nodes/nope/decommission'))
      .status(404)
      .detail('unknown node nope');
  });
});
