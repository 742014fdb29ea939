import { expect } from 'chai';
import { agentSocket, ADMIN_TOKEN, disconnect, startControl, type ControlInstance } from '../../../support/agent-socket.js';
import { eventually } from '../../../support/wait.js';
import { issueAgentToken } from '../../../support/agents.js';
import { expectResponse } from '../../../support/http.js';
import { bgp, node, wg } from './support.js';
import { RPKI_MIN_AGENT } from '../../../../domain/fleet-ops/agent-gate.js';

/** The release just below `version` (`1.0.560` -> `1.0.559`). */
const below = (version: string) => version.replace(/\d+$/, (n) => String(Number(n) - 1));

describe('control: blocked_prefixes follow the agent version over heartbeats', () => {
  let c: ControlInstance;
  let token: string;
  const blocked = async () => (await c.admin.get('/admin/nodes/fra1/desired-state')).body.state.bird.blocked_prefixes;
  const generation = async () => (await c.admin.get('/admin/nodes/fra1')).body.current_generation;

  before(async () => {
    c = await startControl();
    await c.admin.post('/admin/nodes', node('fra1'));
    await c.admin.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_peer', 51801) });
    await c.admin.post('/admin/nodes/fra1/bgp-sessions', { spec: bgp('dn42_peer', 4242420002) });
    token = (await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1')).token;
  });
  after(() => c.close());

  it('re-publishes the node when its agent crosses 1.0.187, in either direction', async () => {
    const agent = agentSocket(c.url, 'ws/fra1', token);
    await agent.next('hello');
    agent.send({ type: 'heartbeat', agent_version: '1.0.150', applied_generation: 2, apply_status: 'succeeded' });
    await eventually(
      async () => (await c.sys.pool.query(`SELECT agent_version FROM agent_liveness WHERE node_id = 'fra1'`)).rows[0]?.agent_version === '1.0.150',
    );
    // The first version heard is below the RPKI gate too: bird.rpki leaves the document.
    await agent.next('desired_state_updated');
    expect((await c.admin.get('/admin/nodes/fra1/desired-state')).body.state.bird).not.to.have.property('rpki');

    const block = await c.admin.post('/admin/fleet/mitigations/prefix-block', { prefix: '172.20.1.0/24' });
    expectResponse(block)
      .status(200)
      .body({ deferred: [{ node_id: 'fra1', agent_version: '1.0.150' }] });
    expect(await blocked()).to.deep.equal([]);
    const deferredAt = await generation();
    await agent.next('desired_state_updated');

    // Same side of the line: nothing to re-publish.
    agent.send({ type: 'heartbeat', agent_version: '1.0.151', applied_generation: deferredAt, apply_status: 'succeeded' });
    agent.send({ type: 'heartbeat', agent_version: '1.0.187', applied_generation: deferredAt, apply_status: 'succeeded' });
    const upgraded = await agent.next('desired_state_updated');
    expect(upgraded.generation).to.equal(deferredAt + 1);
    expect(await blocked()).to.deep.equal(['172.20.1.0/24']);

    // A health gate that restored the old agent: the block leaves its document again.
    agent.send({ type: 'heartbeat', agent_version: '1.0.186', applied_generation: deferredAt + 1, apply_status: 'failed' });
    expect((await agent.next('desired_state_updated')).generation).to.equal(deferredAt + 2);
    expect(await blocked()).to.deep.equal([]);
    await disconnect(c, agent, 'fra1');
  });

  it(`re-publishes a node that blocks nothing when its agent crosses ${RPKI_MIN_AGENT} (bird.rpki), in either direction`, async () => {
    const rpki = async () => (await c.admin.get('/admin/nodes/fra1/desired-state')).body.state.bird.rpki;
    const agent = agentSocket(c.url, 'ws/fra1', token);
    await agent.next('hello');
    const before = await generation();
    agent.send({ type: 'heartbeat', agent_version: RPKI_MIN_AGENT, applied_generation: before, apply_status: 'succeeded' });
    expect((await agent.next('desired_state_updated')).generation).to.equal(before + 1);
    expect(await rpki()).to.deep.equal({ mode: 'reject_invalid' });
    expect((await c.admin.get(`/admin/nodes/fra1/generations/${before + 1}`)).body.reason).to.include(`takes the RPKI policy (${RPKI_MIN_AGENT})`);
    agent.send({ type: 'heartbeat', agent_version: below(RPKI_MIN_AGENT), applied_generation: before + 1, apply_status: 'failed' });
    expect((await agent.next('desired_state_updated')).generation).to.equal(before + 2);
    expect(await rpki()).to.equal(undefined);
    await disconnect(c, agent, 'fra1');
  });

  it('publishes nothing on a crossing when the node blocks no prefix', async () => {
    await c.admin.post('/admin/fleet/mitigations/prefix-unblock', { prefix: '172.20.1.0/24' });
    const agent = agentSocket(c.url, 'ws/fra1', token);
    await agent.next('hello');
    const before = await generation();
    agent.send({ type: 'heartbeat', agent_version: '1.0.200', applied_generation: before, apply_status: 'succeeded' });
    // A socket's heartbeats are handled one after the other, each with its republication: once a later one
    // (no crossing) is recorded, whatever the first one would publish is published.
    agent.send({ type: 'heartbeat', agent_version: '1.0.201', applied_generation: before, apply_status: 'succeeded' });
    await eventually(
      async () => (await c.sys.pool.query(`SELECT agent_version FROM agent_liveness WHERE node_id = 'fra1'`)).rows[0]?.agent_version === '1.0.201',
    );
    expect(await generation()).to.equal(before);
    expect(agent.messages.map((m) => m.type)).to.deep.equal(['hello']);
    await disconnect(c, agent, 'fra1');
  });

  it('a rollback to a generation that carried bird.rpki leaves it out while the agent is below the gate', async () => {
    const agent = agentSocket(c.url, 'ws/fra1', token);
    await agent.next('hello');
    const before = await generation();
    agent.send({ type: 'heartbeat', agent_version: RPKI_MIN_AGENT, applied_generation: before, apply_status: 'succeeded' });
    const withRpki = (await agent.next('desired_state_updated')).generation;
    agent.send({ type: 'heartbeat', agent_version: below(RPKI_MIN_AGENT), applied_generation: withRpki, apply_status: 'succeeded' });
    await agent.next('desired_state_updated');
    expect((await c.admin.get(`/admin/nodes/fra1/generations/${withRpki}`)).body.state.bird.rpki).to.deep.equal({ mode: 'reject_invalid' });
    const rollback = await c.admin.post(`/admin/nodes/fra1/generations/${withRpki}/rollback`);
    expectResponse(rollback).status(200);
    expect((await c.admin.get('/admin/nodes/fra1/desired-state')).body).to.deep.include({ generation: rollback.body.new_generation });
    expect((await c.admin.get('/admin/nodes/fra1/desired-state')).body.state.bird).not.to.have.property('rpki');
    await disconnect(c, agent, 'fra1');
  });
});
