import { expect } from 'chai';
import { agentSocket, ADMIN_TOKEN, disconnect, startControl, type ControlInstance } from '../../support/agent-socket.js';
import { issueAgentToken } from '../../support/agents.js';
import { expectResponse } from '../../support/http.js';
import { node, wg } from './fleet/support.js';

describe('POST /admin/nodes/{node_id}/notify', () => {
  let c: ControlInstance;
  let token: string;

  before(async () => {
    c = await startControl();
    expectResponse(await c.admin.post('/admin/nodes', node('fra1'))).status(201);
    expectResponse(await c.admin.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51801) })).status(201);
    expectResponse(await c.admin.post('/admin/nodes', node('ams1', { router_id: '172.20.0.2' }))).status(201);
    token = (await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1')).token;
  });
  after(() => c.close());

  const generation = async (nodeId: string) => (await c.admin.get(`/admin/nodes/${nodeId}`)).body.current_generation as number;

  it('answers 404 for an unknown node', async () => {
    expectResponse(await c.admin.post('/admin/nodes/ghost/notify', {}))
      .status(404)
      .detail('unknown node ghost');
  });

  it('answers 409 when no agent of the node is connected, and writes nothing', async () => {
    const before = await generation('fra1');
    expectResponse(await c.admin.post('/admin/nodes/fra1/notify', { reason: 'nobody home' }))
      .status(409)
      .detail('node fra1 has no connected agent');
    expect(await generation('fra1')).to.equal(before);
  });

  it('re-publishes the desired state as a new generation and rings the agent (default event)', async () => {
    const agent = agentSocket(c.url, 'ws/fra1', token);
    await agent.next('hello');
    const before = await generation('fra1');
    const res = await c.admin.post('/admin/nodes/fra1/notify', { reason: 'please reconcile' });
    expectResponse(res).status(200);
    expect(res.body).to.deep.equal({ node_id: 'fra1', event: 'desired_state_updated', generation: before + 1, subscribers: 1, delivered: 1 });
    expect(await agent.next()).to.deep.equal({ type: 'desired_state_updated', generation: before + 1, reason: 'please reconcile' });
    const [latest, previous] = (await c.admin.get('/admin/nodes/fra1/generations?limit=2')).body.generations;
    expect(latest).to.deep.include({ generation: before + 1, reason: 'please reconcile' });
    const states = await Promise.all([latest, previous].map(async (g) => (await c.admin.get(`/admin/nodes/fra1/generations/${g.generation}`)).body.state));
    expect(states[0]).to.deep.equal(states[1]);
    await disconnect(c, agent, agent.ws.url.endsWith('ams1') ? 'ams1' : 'fra1');
  });

  it('sends snapshot_request without a new generation', async () => {
    const agent = agentSocket(c.url, 'ws/fra1', token);
    await agent.next('hello');
    const before = await generation('fra1');
    const res = await c.admin.post('/admin/nodes/fra1/notify', { event: 'snapshot_request', reason: 'show me' });
    expect(res.body).to.deep.equal({ node_id: 'fra1', event: 'snapshot_request', generation: before, subscribers: 1, delivered: 1 });
    expect(await agent.next()).to.deep.equal({ type: 'snapshot_request', reason: 'show me' });
    expect(await generation('fra1')).to.equal(before);
    await disconnect(c, agent, agent.ws.url.endsWith('ams1') ? 'ams1' : 'fra1');
  });

  it('answers 404 for desired_state_updated on a node that has no desired state yet', async () => {
    const agent = agentSocket(c.url, 'ws/ams1', (await issueAgentToken(c.url, ADMIN_TOKEN, 'ams1')).token);
    await agent.next('hello');
    expectResponse(await c.admin.post('/admin/nodes/ams1/notify', {}))
      .status(404)
      .detail('no desired state for node ams1');
    expectResponse(await c.admin.post('/admin/nodes/ams1/notify', { event: 'snapshot_request' }))
      .status(200)
      .body({ generation: 0 });
    await disconnect(c, agent, agent.ws.url.endsWith('ams1') ? 'ams1' : 'fra1');
  });

  it('validates the event (422)', async () => {
    expectResponse(await c.admin.post('/admin/nodes/fra1/notify', { event: 'reboot' })).status(422);
    expectResponse(await c.admin.post('/admin/nodes/fra1/notify', { event: 'snapshot_request', extra: 1 })).status(422);
  });
});
