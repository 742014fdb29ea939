import { expect } from 'chai';
import { resolveAgentToken } from '../../../../http/control/agent/auth.js';
import { issueAgentToken } from '../../../support/agents.js';
import { expectResponse } from '../../../support/http.js';
import { ADMIN_TOKEN, nodeBody, startAgentHarness, type AgentHarness } from './support.js';

describe('control: agent authentication (requireAgent, resolveAgentToken)', () => {
  let h: AgentHarness;
  beforeEach(async () => {
    h = await startAgentHarness();
    expectResponse(await h.admin.post('/admin/nodes', nodeBody('fra1'))).status(201);
  });
  afterEach(async () => {
    await h.close();
  });

  it('resolves a freshly issued token to its node, token id and agent id', async () => {
    const { token, token_id } = await issueAgentToken(h.url, ADMIN_TOKEN, 'fra1', { agent_id: 'agent-a' });
    const res = await h.whoami(token);
    expect(res.status).to.equal(200);
    expect(res.body.agent).to.deep.equal({ node_id: 'fra1', token_id, agent_id: 'agent-a' });
    expect(await resolveAgentToken(h.sys.context, `Bearer ${token}`)).to.deep.equal({ node_id: 'fra1', token_id, agent_id: 'agent-a' });
  });

  it('answers 401 for a missing, malformed, unknown or wrong-secret Bearer', async () => {
    const { token, token_id } = await issueAgentToken(h.url, ADMIN_TOKEN, 'fra1');
    expect(await h.whoami()).to.deep.equal({ status: 401, body: { detail: 'missing bearer token' } });
    for (const header of [
      `Basic ${token}`,
      'Bearer',
      `Bearer ${token_id}`,
      `Bearer ${token}x`,
      `Bearer agt_0000000000000000.${token.split('.')[1]}`,
      `Bearer ${ADMIN_TOKEN}`,
    ]) {
      const res = await h.whoami(undefined, header);
      expect(res.status, header).to.equal(401);
    }
    const wrong = `${token_id}.${'A'.repeat(43)}`;
    expect(await h.whoami(wrong)).to.deep.equal({ status: 401, body: { detail: 'invalid or expired agent token' } });
    expect(await resolveAgentToken(h.sys.context, undefined)).to.equal(null);
  });

  it('stops resolving a token once its ttl has passed on the service clock', async () => {
    const { token } = await issueAgentToken(h.url, ADMIN_TOKEN, 'fra1', { ttl_seconds: 60 });
    h.sys.clock.advance(59_999);
    expect((await h.whoami(token)).status).to.equal(200);
    h.sys.clock.advance(1);
    expect((await h.whoami(token)).status).to.equal(401);
  });

  it('stops resolving a revoked token and the old token of a rotation; the successor works', async () => {
    const a = await issueAgentToken(h.url, ADMIN_TOKEN, 'fra1');
    const b = await issueAgentToken(h.url, ADMIN_TOKEN, 'fra1');
    expectResponse(await h.admin.delete(`/admin/agent-tokens/${a.token_id}`)).status(204);
    expect((await h.whoami(a.token)).status).to.equal(401);
    const rotated = await h.admin.post(`/admin/agent-tokens/${b.token_id}/rotate`, {});
    expectResponse(rotated).status(201);
    expect((await h.whoami(b.token)).status).to.equal(401);
    expect((await h.whoami(rotated.body.token)).body.agent.node_id).to.equal('fra1');
  });

  it('stops resolving the tokens of a deleted node, also after the node id is created again', async () => {
    const { token } = await issueAgentToken(h.url, ADMIN_TOKEN, 'fra1');
    expectResponse(await h.admin.delete('/admin/nodes/fra1')).status(204);
    expect((await h.whoami(token)).status).to.equal(401);
    expectResponse(await h.admin.post('/admin/nodes', nodeBody('fra1'))).status(201);
    expect((await h.whoami(token)).status).to.equal(401);
  });
});
