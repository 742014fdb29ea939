import { expect } from 'chai';
import { INVALID_LITERAL } from '../../../../domain/agent/secrets.js';
import { issueAgentToken } from '../../../support/agents.js';
import { expectResponse } from '../../../support/http.js';
import { auditEntries } from '../support.js';
import { ADMIN_TOKEN, nodeBody, startAgentHarness, type AgentHarness } from './support.js';

const LITERAL = 'q7Vx2mK9pL4sN8dR3fT6hJ1wZ5cB0yG-aE_uI2oP7kM';

describe('control: agent tokens (admin)', () => {
  let h: AgentHarness;
  beforeEach(async () => {
    h = await startAgentHarness();
    expectResponse(await h.admin.post('/admin/nodes', nodeBody('fra1'))).status(201);
  });
  afterEach(async () => {
    await h.close();
  });

  it('issues a token (201) shaped agt_<suffix>.<secret>, bound to the node, shown once in full', async () => {
    const res = await h.admin.post('/admin/nodes/fra1/agent-tokens', { agent_id: 'agent-a', ttl_seconds: 3600 });
    expectResponse(res).status(201);
    expect(res.body.token).to.match(/^agt_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
    expect(res.body).to.deep.equal({
      token: res.body.token,
      secret: res.body.token,
      node_id: 'fra1',
      agent_id: 'agent-a',
      issued_at: '2026-11-01T12:00:00.000Z',
      expires_at: '2026-11-01T13:00:00.000Z',
      revoked_at: null,
    });
    const list = await h.admin.get('/admin/nodes/fra1/agent-tokens');
    expectResponse(list).status(200);
    const tokenId = res.body.token.split('.')[0];
    expect(list.body).to.deep.equal([
      { token: tokenId, node_id: 'fra1', agent_id: 'agent-a', issued_at: '2026-11-01T12:00:00.000Z', expires_at: '2026-11-01T13:00:00.000Z', revoked_at: null },
    ]);
  });

  it('stores only the sha256 of the secret', async () => {
    const { token } = await issueAgentToken(h.url, ADMIN_TOKEN, 'fra1');
    const secret = token.split('.')[1];
    const { rows } = await h.sys.pool.query(`SELECT data::text AS data FROM events UNION ALL SELECT row_to_json(t)::text FROM agent_tokens t`);
    expect(rows.length).to.be.greaterThan(1);
    for (const row of rows) expect(row.data).to.not.contain(secret);
  });

  it('answers 404 unknown node for every node-scoped token route', async () => {
    expectResponse(await h.admin.post('/admin/nodes/nope/agent-tokens', {}))
      .status(404)
      .detail('unknown node nope');
    expectResponse(await h.admin.get('/admin/nodes/nope/agent-tokens'))
      .status(404)
      .detail('unknown node nope');
    expectResponse(await h.admin.post('/admin/agent-tokens/agt_0000000000000000/rotate', {}))
      .status(404)
      .detail('unknown agent token agt_0000000000000000');
    expectResponse(await h.admin.delete('/admin/agent-tokens/agt_0000000000000000'))
      .status(404)
      .detail('unknown agent token agt_0000000000000000');
  });

  it('accepts a literal secret with enough entropy and refuses weak ones with 400 invalid token', async () => {
    const res = await h.admin.post('/admin/nodes/fra1/agent-tokens', { token: LITERAL });
    expectResponse(res).status(201);
    expect(res.body.token).to.match(new RegExp(`^agt_[0-9a-f]{16}\\.${LITERAL}$`));
    expect((await h.whoami(res.body.token)).status).to.equal(200);
    for (const weak of [
      LITERAL.slice(0, 42), // too short
      'a'.repeat(64), // one character
      'abababababababababababababababababababababababab', // two characters
      '0123012301230123012301230123012301230123012301230123', // four characters: 104 bits
      LITERAL.slice(0, 42) + '=', // padding is not base64url
      LITERAL.slice(0, 40) + '+/==', // base64, not base64url
      'x'.repeat(513),
    ]) {
      expectResponse(await h.admin.post('/admin/nodes/fra1/agent-tokens', { token: weak }))
        .status(400)
        .detail(INVALID_LITERAL);
    }
    expect(INVALID_LITERAL).to.match(/^invalid token: /);
  });

  it('validates ttl_seconds >= 1 and the body fields (422)', async () => {
    for (const body of [{ ttl_seconds: 0 }, { ttl_seconds: -5 }, { ttl_seconds: 1.5 }, { colour: 'red' }, { agent_id: '' }]) {
      expectResponse(await h.admin.post('/admin/nodes/fra1/agent-tokens', body)).status(422);
    }
    expectResponse(await h.admin.post('/admin/nodes/fra1/agent-tokens', { ttl_seconds: 1 })).status(201);
    expectResponse(await h.admin.post('/admin/nodes/fra1/agent-tokens')).status(201);
  });

  it('rotates: 201 with a new token for the same node and agent, the old one revoked, the lifetime kept unless given', async () => {
    const old = await issueAgentToken(h.url, ADMIN_TOKEN, 'fra1', { agent_id: 'agent-a', ttl_seconds: 600 });
    h.sys.clock.advance(60_000);
    const rotated = await h.admin.post(`/admin/agent-tokens/${old.token_id}/rotate`);
    expectResponse(rotated).status(201);
    expect(rotated.body).to.deep.include({
      node_id: 'fra1',
      agent_id: 'agent-a',
      issued_at: '2026-11-01T12:01:00.000Z',
      expires_at: '2026-11-01T12:11:00.000Z',
      revoked_at: null,
    });
    expect(rotated.body.token).to.not.equal(old.token);
    expect((await h.whoami(old.token)).status).to.equal(401);
    expect((await h.whoami(rotated.body.token)).status).to.equal(200);

    const newId = rotated.body.token.split('.')[0];
    const again = await h.admin.post(`/admin/agent-tokens/${newId}/rotate`, { ttl_seconds: 30 });
    expectResponse(again).status(201).body({ expires_at: '2026-11-01T12:01:30.000Z' });

    const list = await h.admin.get('/admin/nodes/fra1/agent-tokens');
    expect(list.body.map((t: { token: string; revoked_at: string | null }) => [t.token, t.revoked_at])).to.deep.equal([
      [old.token_id, '2026-11-01T12:01:00.000Z'],
      [newId, '2026-11-01T12:01:00.000Z'],
      [again.body.token.split('.')[0], null],
    ]);
    expectResponse(await h.admin.post(`/admin/agent-tokens/${old.token_id}/rotate`))
      .status(409)
      .detail(`agent token ${old.token_id} is revoked; issue a new one`);
    expectResponse(await h.admin.post(`/admin/agent-tokens/${newId}/rotate`, { ttl_seconds: 0 })).status(422);
  });

  it('revokes with 204; the token stops resolving; revoking again is 204 too', async () => {
    const t = await issueAgentToken(h.url, ADMIN_TOKEN, 'fra1');
    expect((await h.whoami(t.token)).status).to.equal(200);
    h.sys.clock.advance(5_000);
    expectResponse(await h.admin.delete(`/admin/agent-tokens/${t.token_id}`)).status(204);
    expect((await h.whoami(t.token)).status).to.equal(401);
    expectResponse(await h.admin.delete(`/admin/agent-tokens/${t.token_id}`)).status(204);
    const list = await h.admin.get('/admin/nodes/fra1/agent-tokens');
    expect(list.body[0].revoked_at).to.equal('2026-11-01T12:00:05.000Z');
  });

  it('needs the admin credential and audits the writes without the secret', async () => {
    expectResponse(await h.anon.post('/admin/nodes/fra1/agent-tokens', {})).status(401);
    const { token, token_id } = await issueAgentToken(h.url, ADMIN_TOKEN, 'fra1');
    await h.admin.delete(`/admin/agent-tokens/${token_id}`);
    const entries = await auditEntries(h.sys);
    const paths = entries.map((e) => `${e.method} ${e.path} ${e.status_code}`);
    expect(paths).to.include.members([
      'POST /control/v1/admin/nodes/fra1/agent-tokens 401',
      'POST /control/v1/admin/nodes/fra1/agent-tokens 201',
      `DELETE /control/v1/admin/agent-tokens/${token_id} 204`,
    ]);
    expect(JSON.stringify(entries)).to.not.contain(token.split('.')[1]);
  });

  it('describes the routes in the OpenAPI document', async () => {
    const doc = (await h.anon.get('/openapi.json')).body;
    expect(doc.paths['/control/v1/admin/nodes/{node_id}/agent-tokens']).to.have.keys('get', 'post');
    expect(doc.paths['/control/v1/admin/agent-tokens/{token_id}/rotate']).to.have.key('post');
    expect(doc.paths['/control/v1/admin/enrollment-tokens']).to.have.keys('get', 'post');
    expect(doc.paths['/control/v1/admin/registrations']).to.have.key('get');
    expect(doc.paths['/control/v1/agent/register'].post.requestBody.content['application/json'].schema.properties).to.have.keys(
      'enrollment_token',
      'requested_node_id',
      'inventory',
    );
  });
});
