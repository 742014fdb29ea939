import { createHash, generateKeyPairSync } from 'node:crypto';
import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { wg } from '../fleet/support.js';
import { issueAgentToken } from '../../../support/agents.js';
import { ADMIN_TOKEN } from '../fleet/support.js';
import { anonymous, startAgents, type AgentHarness } from './telemetry-support.js';

describe('GET /agent/desired-state and /agent/recovery-public-key', function () {
  this.timeout(30_000);

  describe('without a recovery key', () => {
    let h: AgentHarness;
    before(async () => {
      h = await startAgents(['n1', 'n2']);
    });
    after(async () => h?.close());

    it('answers 404 before the first generation, then the published state of the token node', async () => {
      expectResponse(await h.agent.n1.get('/agent/desired-state'))
        .status(404)
        .detail('no desired state for node n1');
      expectResponse(await h.admin.post('/admin/nodes/n1/interfaces', { spec: wg('dn42_p1', 51801) })).status(201);
      const res = await h.agent.n1.get('/agent/desired-state');
      expectResponse(res).status(200);
      expect(res.body).to.include({ node_id: 'n1', generation: 1 });
      expect(res.body.state).to.deep.equal((await h.admin.get('/admin/nodes/n1/desired-state')).body.state);
      expect(res.body.state.interfaces.map((i: { name: string }) => i.name)).to.deep.equal(['dn42_p1']);
      expect((await h.agent.n1.get('/agent/desired-state?node_id=n1')).body.generation).to.equal(1);
    });

    it('refuses another node in the query (403) and a request without token (401)', async () => {
      expectResponse(await h.agent.n2.get('/agent/desired-state?node_id=n1'))
        .status(403)
        .detail('agent token is not bound to node n1');
      expectResponse(await anonymous(h).get('/agent/desired-state')).status(401);
      expectResponse(await h.agent.n2.get('/agent/recovery-public-key?node_id=n1')).status(403);
      expectResponse(await anonymous(h).get('/agent/recovery-public-key')).status(401);
    });

    it('tags the document with its generation: If-None-Match of the current tag is 304 without a body, a change is 200 with a new tag', async () => {
      const first = await h.agent.n1.get('/agent/desired-state');
      expectResponse(first).status(200);
      const tag = first.headers.get('etag')!;
      expect(tag).to.match(/^"\d+-[0-9a-z]+"$/);
      expect(tag.startsWith(`"${first.body.generation}-`)).to.equal(true);
      expect(first.headers.get('content-type')).to.match(/^application\/json/);

      const unchanged = await h.agent.n1.get('/agent/desired-state', { headers: { 'if-none-match': tag } });
      expectResponse(unchanged).status(304);
      expect(unchanged.text).to.equal('');
      expect(unchanged.headers.get('etag')).to.equal(tag);
      // Weak comparison, and a list naming it among others (RFC 9110 13.1.2).
      expectResponse(await h.agent.n1.get('/agent/desired-state', { headers: { 'if-none-match': `"other", W/${tag}` } })).status(304);

      expectResponse(await h.admin.post('/admin/nodes/n1/interfaces', { spec: wg('dn42_p2', 51802) })).status(201);
      const changed = await h.agent.n1.get('/agent/desired-state', { headers: { 'if-none-match': tag } });
      expectResponse(changed).status(200);
      expect(changed.body.generation).to.equal(first.body.generation + 1);
      const newTag = changed.headers.get('etag')!;
      expect(newTag).not.to.equal(tag);
      expect(newTag.startsWith(`"${changed.body.generation}-`)).to.equal(true);
      expect(changed.body.state).to.deep.equal((await h.admin.get('/admin/nodes/n1/desired-state')).body.state);
      expect(changed.body).to.include({ node_id: 'n1', reason: (await h.admin.get('/admin/nodes/n1/desired-state')).body.reason });
      expectResponse(await h.agent.n1.get('/agent/desired-state', { headers: { 'if-none-match': newTag } })).status(304);
    });

    it('answers a tag with the current number but another instant (a document it never served) with the whole document', async () => {
      const current = await h.agent.n1.get('/agent/desired-state');
      const tag = current.headers.get('etag')!;
      const forged = `"${current.body.generation}-0"`;
      const res = await h.agent.n1.get('/agent/desired-state', { headers: { 'if-none-match': forged } });
      expectResponse(res).status(200);
      expect(res.headers.get('etag')).to.equal(tag);
      expect(res.body).to.deep.equal(current.body);
    });

    it('refuses before it compares tags: a foreign, wrong or revoked token with the current tag is 403 or 401, never 304', async () => {
      const tag = (await h.agent.n1.get('/agent/desired-state')).headers.get('etag')!;
      const conditional = { headers: { 'if-none-match': tag } };
      expectResponse(await h.agent.n2.get('/agent/desired-state?node_id=n1', conditional))
        .status(403)
        .detail('agent token is not bound to node n1');
      expectResponse(await anonymous(h).get('/agent/desired-state', conditional)).status(401);
      expectResponse(await anonymous(h).get('/agent/desired-state', { ...conditional, token: 'agt_0000000000000000.wrong' })).status(401);
      const spare = await issueAgentToken(h.url, ADMIN_TOKEN, 'n1');
      expectResponse(await anonymous(h).get('/agent/desired-state', { ...conditional, token: spare.token })).status(304);
      expectResponse(await h.admin.delete(`/admin/agent-tokens/${spare.token_id}`)).status(204);
      expectResponse(await anonymous(h).get('/agent/desired-state', { ...conditional, token: spare.token })).status(401);
    });

    it('answers concurrent pulls (read in one batch) each for its own node and tag', async () => {
      expectResponse(await h.admin.post('/admin/nodes/n2/interfaces', { spec: wg('dn42_q1', 51811) })).status(201);
      const [one, two] = [await h.agent.n1.get('/agent/desired-state'), await h.agent.n2.get('/agent/desired-state')];
      const [tag1, tag2] = [one.headers.get('etag')!, two.headers.get('etag')!];
      const spare = await issueAgentToken(h.url, ADMIN_TOKEN, 'n1');
      const answers = await Promise.all([
        h.agent.n1.get('/agent/desired-state', { headers: { 'if-none-match': tag1 } }),
        h.agent.n2.get('/agent/desired-state', { headers: { 'if-none-match': tag1 } }),
        h.agent.n2.get('/agent/desired-state', { headers: { 'if-none-match': tag2 } }),
        h.agent.n1.get('/agent/desired-state'),
        h.agent.n2.get('/agent/desired-state?node_id=n1', { headers: { 'if-none-match': tag1 } }),
        anonymous(h).get('/agent/desired-state', { token: spare.token, headers: { 'if-none-match': tag1 } }),
        anonymous(h).get('/agent/desired-state', { token: `${spare.token}x`, headers: { 'if-none-match': tag1 } }),
      ]);
      // (Express tags error bodies too; only a document's tag is compared.)
      expect(answers.map((a) => [a.status, a.status < 400 ? a.headers.get('etag') : null])).to.deep.equal([
        [304, tag1],
        [200, tag2],
        [304, tag2],
        [200, tag1],
        [403, null],
        [304, tag1],
        [401, null],
      ]);
      expect(answers[1].body).to.deep.equal(two.body);
      expect(answers[3].body).to.deep.equal(one.body);
    });

    it('says configured false when no recovery key is set', async () => {
      const res = await h.agent.n1.get('/agent/recovery-public-key');
      expectResponse(res).status(200);
      expect(res.body).to.deep.equal({ configured: false });
    });
  });

  describe('with RECOVERY_PUBLIC_KEY', () => {
    const { publicKey } = generateKeyPairSync('x25519');
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    let h: AgentHarness;
    before(async () => {
      h = await startAgents(['n1'], { RECOVERY_PUBLIC_KEY: pem });
    });
    after(async () => h?.close());

    it('hands out the PEM and its fingerprint, sha256 over the DER in hex', async () => {
      const res = await h.agent.n1.get('/agent/recovery-public-key?node_id=n1');
      expectResponse(res).status(200);
      const fingerprint = createHash('sha256')
        .update(publicKey.export({ type: 'spki', format: 'der' }))
        .digest('hex');
      expect(res.body).to.deep.equal({ configured: true, public_key_pem: pem, fingerprint });
    });
  });
});
