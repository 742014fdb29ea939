import { expect } from 'chai';
import { once } from 'node:events';
import { DOORBELL_CHANNEL } from '../../../../infra/doorbell.js';
import { PgListener } from '../../../../infra/db/listener.js';
import { expectResponse } from '../../../support/http.js';
import { bgp, node, startFleet, wg, type FleetHarness } from './support.js';

describe('control: desired state and generations', () => {
  let h: FleetHarness;
  beforeEach(async () => {
    h = await startFleet();
    await h.client.post('/admin/nodes', node('fra1'));
  });
  afterEach(async () => {
    await h.close();
  });

  async function threeGenerations() {
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51801) }); // 1
    h.sys.clock.advance(60_000);
    await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_b', 51802) }); // 2
    h.sys.clock.advance(60_000);
    await h.client.post('/admin/nodes/fra1/bgp-sessions', { spec: bgp('s1', 4242420002, { interface: 'dn42_a' }) }); // 3
  }

  it('answers 404 before the first generation, then serves the newest', async () => {
    expectResponse(await h.client.get('/admin/nodes/fra1/desired-state'))
      .status(404)
      .detail('no desired state for node fra1');
    expectResponse(await h.client.get('/admin/nodes/ghost/desired-state'))
      .status(404)
      .detail('unknown node ghost');
    await threeGenerations();
    const res = await h.client.get('/admin/nodes/fra1/desired-state');
    expectResponse(res).status(200).body({ node_id: 'fra1', generation: 3, reason: 'bgp session s1 created' });
    expect(res.body.state.node).to.deep.include({ node_id: 'fra1', asn: 4242420001, router_id: '172.20.0.1' });
    expect(res.body.state.bird.internal_topology).to.have.keys(['routers', 'hosts', 'adjacencies']);
  });

  it('lists generations newest first with limit 1..500 (default 50)', async () => {
    await threeGenerations();
    const res = await h.client.get('/admin/nodes/fra1/generations');
    expect(res.body.generations.map((g: { generation: number }) => g.generation)).to.deep.equal([3, 2, 1]);
    expect(res.body.generations[2]).to.deep.equal({
      node_id: 'fra1',
      generation: 1,
      reason: 'interface dn42_a created',
      rollback_of: null,
      actor: 'admin',
      created_at: '2026-11-01T12:00:00.000Z',
    });
    expect((await h.client.get('/admin/nodes/fra1/generations?limit=1')).body.generations).to.have.length(1);
    expectResponse(await h.client.get('/admin/nodes/fra1/generations?limit=0')).status(422);
    expectResponse(await h.client.get('/admin/nodes/fra1/generations?limit=501')).status(422);
    expectResponse(await h.client.get('/admin/nodes/ghost/generations'))
      .status(404)
      .detail('unknown node ghost');
  });

  it('shows one generation with its snapshot, 404 for a missing one', async () => {
    await threeGenerations();
    const res = await h.client.get('/admin/nodes/fra1/generations/2');
    expectResponse(res).status(200).body({ generation: 2, reason: 'interface dn42_b created' });
    expect(res.body.state.interfaces.map((i: { name: string }) => i.name)).to.deep.equal(['dn42_a', 'dn42_b']);
    expectResponse(await h.client.get('/admin/nodes/fra1/generations/9'))
      .status(404)
      .detail('node fra1 has no generation 9');
  });

  it('diffs field by field against the previous generation or `against`; generation 1 needs `against`', async () => {
    await threeGenerations();
    const d = await h.client.get('/admin/nodes/fra1/generations/2/diff');
    expectResponse(d).status(200).body({ node_id: 'fra1', generation: 2, against: 1 });
    expect(d.body.changes.map((c: { path: string; op: string }) => [c.op, c.path])).to.deep.equal([['added', '/interfaces/name=dn42_b']]);
    const back = await h.client.get('/admin/nodes/fra1/generations/1/diff?against=3');
    expect(back.body.changes.map((c: { op: string }) => c.op)).to.include('removed');
    expectResponse(await h.client.get('/admin/nodes/fra1/generations/1/diff'))
      .status(400)
      .detail('no previous generation to diff against');
    expectResponse(await h.client.get('/admin/nodes/fra1/generations/2/diff?against=7'))
      .status(404)
      .detail('node fra1 has no generation 7');
  });

  it('rolls back by re-publishing a snapshot as a new generation and rings the doorbell', async () => {
    await threeGenerations();
    h.sys.broadcaster.online.add('fra1');
    const res = await h.client.post('/admin/nodes/fra1/generations/1/rollback');
    expectResponse(res).status(200);
    expect(res.body).to.deep.equal({
      node_id: 'fra1',
      target_generation: 1,
      new_generation: 4,
      reason: 'rollback to generation 1',
      subscribers: 1,
      delivered: 1,
    });
    const g1 = (await h.client.get('/admin/nodes/fra1/generations/1')).body.state;
    const g4 = await h.client.get('/admin/nodes/fra1/generations/4');
    expect(g4.body.state).to.deep.equal(g1);
    expect(g4.body.rollback_of).to.equal(1);
    expect(h.sys.broadcaster.calls.at(-1)).to.deep.equal({ type: 'desired_state_updated', node_id: 'fra1', generation: 4, reason: 'rollback to generation 1' });
    expectResponse(await h.client.post('/admin/nodes/fra1/generations/9/rollback'))
      .status(404)
      .detail('node fra1 has no generation 9');
    expectResponse(await h.client.post('/admin/nodes/ghost/generations/1/rollback'))
      .status(404)
      .detail('unknown node ghost');
  });

  it('carries each committed generation to other instances over a real NOTIFY', async () => {
    const other = new PgListener(h.sys.db.url, h.sys.log);
    try {
      await other.listen(DOORBELL_CHANNEL);
      const heard = once(other, 'notification');
      await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51801) });
      const [channel, payload] = await heard;
      expect(channel).to.equal(DOORBELL_CHANNEL);
      const message = JSON.parse(payload);
      expect(message.origin).to.equal(h.sys.doorbell.origin);
      expect(message.events).to.deep.equal([{ type: 'desired_state_updated', node_id: 'fra1', generation: 1, reason: 'interface dn42_a created' }]);
    } finally {
      await other.close();
    }
  });

  it('provisions a full desired state: creates the node when missing, overwrites on repeat, 422 when invalid', async () => {
    const state = {
      node: { node_id: 'edge9', asn: 4242420009, router_id: '172.20.9.1' },
      interfaces: [],
      bgp_sessions: [],
      bird: { internal_topology: { routers: [], hosts: [] } },
    };
    const first = await h.client.post('/admin/provision', { state });
    expectResponse(first).status(201);
    expect(first.body).to.deep.equal({ node_id: 'edge9', generation: 1, subscribers: 0, delivered: 0 });
    expectResponse(await h.client.get('/admin/nodes/edge9'))
      .status(200)
      .body({ asn: 4242420009, current_generation: 1 });
    const again = await h.client.post('/admin/provision', { state: { ...state, node: { ...state.node, router_id: '172.20.9.2' } } });
    expectResponse(again).status(201).body({ node_id: 'edge9', generation: 2 });
    expectResponse(await h.client.get('/admin/nodes/edge9'))
      .status(200)
      .body({ router_id: '172.20.9.2' });
    const bad = await h.client.post('/admin/provision', { state: { ...state, interfaces: [{ name: 'this-name-is-far-too-long' }] } });
    expectResponse(bad).status(422).detail('materialization failed schema validation');
    expect(bad.body.detail.errors.length).to.be.greaterThan(0);
    expectResponse(await h.client.post('/admin/provision', { state: { node: {} } })).status(422);
    expect((await h.client.get('/admin/nodes/edge9/generations')).body.generations).to.have.length(2);
  });

  it('replays a node for auditors: history newest first with paging, and the state in force at a time', async () => {
    await threeGenerations();
    const page1 = await h.client.get('/admin/nodes/fra1/history?limit=4');
    expectResponse(page1).status(200);
    // One append writes its streams in stream-id order: `desired-state-*` before `node-*`.
    expect(page1.body.events.map((e: { type: string }) => e.type)).to.deep.equal([
      'BgpSessionCreated',
      'DesiredStatePublished',
      'InterfaceCreated',
      'DesiredStatePublished',
    ]);
    const published = page1.body.events[1];
    expect(published).to.include({ actor: 'admin' });
    expect(published.request_id).to.be.a('string');
    expect(published.request_id).to.equal(page1.body.events[0].request_id);
    expect(published.data).to.deep.include({ generation: 3 });
    expect(published.data).to.not.have.property('state');
    const page2 = await h.client.get(`/admin/nodes/fra1/history?limit=4&before=${page1.body.next_before}`);
    expect(page2.body.events.map((e: { type: string }) => e.type)).to.deep.equal(['InterfaceCreated', 'DesiredStatePublished', 'NodeCreated']);
    expect(page2.body.next_before).to.equal(null);
    expectResponse(await h.client.get('/admin/nodes/ghost/history'))
      .status(404)
      .detail('unknown node ghost');

    // Generations were published at 12:00, 12:01 and 12:02 (test clock).
    const at = await h.client.get('/admin/nodes/fra1/desired-state?at=2026-11-01T12:01:30Z');
    expectResponse(at).status(200).body({ generation: 2 });
    expectResponse(await h.client.get('/admin/nodes/fra1/desired-state?at=2026-11-01T11:00:00Z'))
      .status(404)
      .detail(/^no desired state for node fra1/);
    expectResponse(await h.client.get('/admin/nodes/fra1/desired-state?at=yesterday')).status(422);
  });
});
