import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { startAgentHarness, type AgentHarness } from './support.js';

const state = (nodeId: string) => ({
  node: { node_id: nodeId, asn: 4242420009, router_id: '172.20.9.1' },
  interfaces: [],
  bgp_sessions: [],
  bird: { internal_topology: { routers: [], hosts: [] } },
});
const TOKEN = 'agt_0123456789abcdef.q7Vx2mK9pL4sN8dR3fT6hJ1wZ5cB0yG-aE_uI2oP7kM';
const OTHER_SECRET = 'agt_0123456789abcdef.Zr4Nq8Lw2Yt6Hk0Pm5Vx9Bc3Jd7Fg1Ss-Ua_Ei4Oo8Q';

describe('control: POST /admin/provision with an agent_token', () => {
  let h: AgentHarness;
  beforeEach(async () => {
    h = await startAgentHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('binds the pre-installed token to the node in the same write; the agent authenticates with it at once', async () => {
    expect((await h.whoami(TOKEN)).status).to.equal(401);
    const res = await h.admin.post('/admin/provision', { state: state('edge9'), agent_token: TOKEN });
    expectResponse(res).status(201).body({ node_id: 'edge9', generation: 1 });
    expect((await h.whoami(TOKEN)).body).to.deep.equal({ agent: { node_id: 'edge9', token_id: 'agt_0123456789abcdef', agent_id: null } });
    const listed = await h.admin.get('/admin/nodes/edge9/agent-tokens');
    expect(listed.body.map((t: { token: string }) => t.token)).to.deep.equal(['agt_0123456789abcdef']);
    // The token and the node's generation are one append: same transaction id.
    const { rows } = await h.sys.pool.query(
      `SELECT count(DISTINCT tx_id)::int AS n FROM events WHERE stream_id IN ('agent-token-agt_0123456789abcdef', 'desired-state-edge9')`,
    );
    expect(rows[0].n).to.equal(1);
  });

  it('repeats without conflict for the same token and node: a new generation', async () => {
    expectResponse(await h.admin.post('/admin/provision', { state: state('edge9'), agent_token: TOKEN })).status(201);
    expectResponse(await h.admin.post('/admin/provision', { state: state('edge9'), agent_token: TOKEN }))
      .status(201)
      .body({ generation: 2 });
  });

  it('answers 409 for a token already bound to another node, and writes nothing', async () => {
    expectResponse(await h.admin.post('/admin/provision', { state: state('edge9'), agent_token: TOKEN })).status(201);
    expectResponse(await h.admin.post('/admin/provision', { state: state('edge8'), agent_token: TOKEN }))
      .status(409)
      .detail('agent token agt_0123456789abcdef already exists');
    expectResponse(await h.admin.get('/admin/nodes/edge8')).status(404);
  });

  it('answers 409 for the same token id with another secret, and writes nothing', async () => {
    expectResponse(await h.admin.post('/admin/provision', { state: state('edge9'), agent_token: TOKEN })).status(201);
    expectResponse(await h.admin.post('/admin/provision', { state: state('edge9'), agent_token: OTHER_SECRET })).status(409);
    expect((await h.admin.get('/admin/nodes/edge9/generations')).body.generations).to.have.length(1);
  });

  it('answers 400 for a token that is not a full agent token or has a weak secret, before writing anything', async () => {
    for (const agent_token of [
      'q7Vx2mK9pL4sN8dR3fT6hJ1wZ5cB0yG-aE_uI2oP7kM',
      'agt_0123456789abcdef.short',
      'agt_xyz.q7Vx2mK9pL4sN8dR3fT6hJ1wZ5cB0yG-aE_uI2oP7kM',
      `agt_0123456789abcdef.${'a'.repeat(50)}`,
    ]) {
      const res = await h.admin.post('/admin/provision', { state: state('edge9'), agent_token });
      expect(res.status, agent_token).to.equal(400);
      expect(res.body.detail, agent_token).to.match(/^invalid token/);
    }
    expectResponse(await h.admin.get('/admin/nodes/edge9')).status(404);
  });
});
