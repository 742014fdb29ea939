import { expect } from 'chai';
import { NOTIFY_BUDGET } from '../../../../infra/doorbell.js';
import { onlineAgentCount } from '../../../../infra/agent-hub/presence.js';
import { agentSocket, ADMIN_TOKEN, disconnect, startControl, type ControlInstance } from '../../../support/agent-socket.js';
import { eventually, within } from '../../../support/wait.js';
import { issueAgentToken } from '../../../support/agents.js';
import { expectResponse } from '../../../support/http.js';
import { node, wg } from '../fleet/support.js';

describe('two control instances on one database', () => {
  let a: ControlInstance;
  let b: ControlInstance;
  let token: string;

  before(async () => {
    a = await startControl();
    b = await startControl(a);
    expectResponse(await a.admin.post('/admin/nodes', node('fra1'))).status(201);
    expectResponse(await a.admin.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51801) })).status(201);
    token = (await issueAgentToken(a.url, ADMIN_TOKEN, 'fra1')).token;
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  it('an agent on B receives the doorbell of a write made on A, counted in A’s response', async () => {
    const agent = agentSocket(b.url, 'ws/fra1', token);
    expect(await agent.next()).to.deep.equal({ type: 'hello', node_id: 'fra1', generation: 1 });
    expect(await onlineAgentCount(a.sys.pool, 'fra1')).to.equal(1);
    const rollback = await a.admin.post('/admin/nodes/fra1/generations/1/rollback');
    expectResponse(rollback).status(200).body({ subscribers: 1, delivered: 1 });
    expect(await agent.next()).to.deep.equal({ type: 'desired_state_updated', generation: rollback.body.new_generation, reason: 'rollback to generation 1' });
    await disconnect(b, agent, 'fra1');
  });

  it('revoking a token on A closes its socket on B with 4401', async () => {
    const issued = await issueAgentToken(a.url, ADMIN_TOKEN, 'fra1');
    const agent = agentSocket(b.url, 'ws/fra1', issued.token);
    await agent.next('hello');
    expectResponse(await a.admin.delete(`/admin/agent-tokens/${issued.token_id}`)).status(204);
    const closed = await within(agent.closed, 3000, 'the socket on B closing');
    expect(closed.code).to.equal(4401);
    await eventually(async () => (await onlineAgentCount(a.sys.pool, 'fra1')) === 0);
  });

  it('notify on A finds the agent on B; without it, 409', async () => {
    const agent = agentSocket(b.url, 'ws/fra1', token);
    await agent.next('hello');
    const res = await a.admin.post('/admin/nodes/fra1/notify', { event: 'snapshot_request', reason: 'from A' });
    expectResponse(res).status(200).body({ subscribers: 1, delivered: 1 });
    expect(await agent.next()).to.deep.equal({ type: 'snapshot_request', reason: 'from A' });
    await disconnect(b, agent, 'fra1');
    expectResponse(await a.admin.post('/admin/nodes/fra1/notify', {}))
      .status(409)
      .detail('node fra1 has no connected agent');
  });

  it('carries events larger than one NOTIFY payload whole (spilled to a table)', async () => {
    const agent = agentSocket(b.url, 'ws/fra1', token);
    await agent.next('hello');
    const wheels = Array.from({ length: 200 }, (_, i) => ({ filename: `dn42_pkg_${i}-1.0.300-py3-none-any.whl`, sha256: 'ab'.repeat(32), size: 1000 + i }));
    const big = { type: 'agent_update_available' as const, node_id: 'fra1', version: '1.0.300', wheels, reason: 'target version 1.0.300' };
    expect(Buffer.byteLength(JSON.stringify(big))).to.be.greaterThan(8000);
    const small = Array.from({ length: 60 }, (_, i) => ({ type: 'snapshot_request' as const, node_id: 'fra1', reason: `r${i} ${'y'.repeat(150)}` }));
    expect(Buffer.byteLength(JSON.stringify(small))).to.be.greaterThan(NOTIFY_BUDGET);
    await a.sys.doorbell.ring([big, ...small]);
    const { node_id: _n, ...wire } = big;
    expect(await agent.next('agent_update_available')).to.deep.equal(wire);
    for (let i = 0; i < 60; i++) expect((await agent.next('snapshot_request')).reason).to.equal(small[i].reason);
    await disconnect(b, agent, 'fra1');
  });

  it("A stops counting B's agents when B's heartbeat expires (crashed instance)", async () => {
    const agent = agentSocket(b.url, 'ws/fra1', token);
    await agent.next('hello');
    expect(await onlineAgentCount(a.sys.pool, 'fra1')).to.equal(1);
    await a.sys.pool.query(`UPDATE agent_hub_instances SET heartbeat_at = now() - interval '1 minute' WHERE instance_id = $1`, [b.sockets.hub.instanceId]);
    expect(await onlineAgentCount(a.sys.pool, 'fra1')).to.equal(0);
    expectResponse(await a.admin.post('/admin/nodes/fra1/notify', {})).status(409);
    await disconnect(b, agent, 'fra1');
  });
});
