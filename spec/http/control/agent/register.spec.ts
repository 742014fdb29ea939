import { expect } from 'chai';
import { INVALID_LITERAL } from '../../../../domain/agent/secrets.js';
import { REGISTER_LIMIT } from '../../../../http/control/agent/register.js';
import { rateLimit } from '../../../../infra/rate-limit.js';
import { expectResponse } from '../../../support/http.js';
import { wg } from '../fleet/support.js';
import { nodeBody, startAgentHarness, type AgentHarness } from './support.js';

const BOOTSTRAP = 'bootstrap-enrollment-token-0123456789';
const LITERAL = 'q7Vx2mK9pL4sN8dR3fT6hJ1wZ5cB0yG-aE_uI2oP7kM';
const inventory = { hostname: 'fra1.example.net', os: 'debian-12', arch: 'x86_64', has_systemd: true, capabilities: ['wireguard', 'bird'] };

describe('control: enrollment tokens, registrations and POST /agent/register', () => {
  let h: AgentHarness;
  beforeEach(async () => {
    h = await startAgentHarness({ BOOTSTRAP_ENROLLMENT_TOKEN: BOOTSTRAP });
  });
  afterEach(async () => {
    await h.close();
  });

  const register = (enrollment_token: string, requested_node_id: string, inv: object = inventory) =>
    h.anon.post('/agent/register', { enrollment_token, requested_node_id, inventory: inv });
  /** A node with its first generation (an interface publishes one). */
  async function provision(nodeId: string): Promise<void> {
    expectResponse(await h.admin.post('/admin/nodes', nodeBody(nodeId))).status(201);
    expectResponse(await h.admin.post(`/admin/nodes/${nodeId}/interfaces`, { spec: wg('dn42_a', 51801) })).status(201);
  }
  async function enrollmentToken(body: object = {}): Promise<{ token_id: string; secret: string }> {
    const res = await h.admin.post('/admin/enrollment-tokens', body);
    expectResponse(res).status(201);
    return res.body;
  }
  const registrations = async (status?: string) => (await h.admin.get(`/admin/registrations${status ? `?status=${status}` : ''}`)).body.registrations;
  const enrollmentRow = async (tokenId: string) =>
    (await h.admin.get('/admin/enrollment-tokens')).body.find((t: { token_id: string }) => t.token_id === tokenId);

  it('limits registrations per client address (429 `too many attempts`), other addresses unaffected, nothing recorded', async () => {
    const perAddress = rateLimit(h.sys.pool, { pool: 'agent-register', ...REGISTER_LIMIT });
    for (let i = 0; i < REGISTER_LIMIT.limit; i++) await perAddress.record('203.0.113.9', h.sys.clock.now());
    const from = (ip: string) =>
      h.anon.post('/agent/register', { enrollment_token: BOOTSTRAP, requested_node_id: 'fra9', inventory }, { headers: { 'x-forwarded-for': ip } });
    expectResponse(await from('203.0.113.9'))
      .status(429)
      .detail('too many attempts');
    expect(await registrations()).to.deep.equal([]);
    expectResponse(await from('203.0.113.10'))
      .status(200)
      .body({ status: 'pending-approval' });
    h.sys.clock.advance(REGISTER_LIMIT.windowSeconds * 1000);
    expectResponse(await from('203.0.113.9')).status(200);
  });

  describe('enrollment tokens (admin)', () => {
    it('creates (201 with the secret once), lists metadata without secrets, deletes (204, then 404)', async () => {
      await provision('fra1');
      const res = await h.admin.post('/admin/enrollment-tokens', { node_id: 'fra1', description: 'first agent', expires_at: '2026-11-02T12:00:00Z' });
      expectResponse(res).status(201);
      expect(res.body).to.deep.equal({
        token_id: res.body.token_id,
        node_id: 'fra1',
        description: 'first agent',
        expires_at: '2026-11-02T12:00:00.000Z',
        used_at: null,
        created_at: '2026-11-01T12:00:00.000Z',
        secret: res.body.secret,
      });
      expect(res.body.token_id).to.match(/^enr_[0-9a-f]{16}$/);
      expect(res.body.secret).to.match(/^[A-Za-z0-9_-]{43}$/);
      const list = await h.admin.get('/admin/enrollment-tokens');
      const { secret: _secret, ...metadata } = res.body;
      expect(list.body).to.deep.equal([metadata]);
      const { rows } = await h.sys.pool.query(`SELECT data::text AS data FROM events`);
      for (const row of rows) expect(row.data).to.not.contain(res.body.secret);

      expectResponse(await h.admin.delete(`/admin/enrollment-tokens/${res.body.token_id}`)).status(204);
      expect((await h.admin.get('/admin/enrollment-tokens')).body).to.deep.equal([]);
      expectResponse(await h.admin.delete(`/admin/enrollment-tokens/${res.body.token_id}`))
        .status(404)
        .detail(`unknown enrollment token ${res.body.token_id}`);
      expectResponse(await register(res.body.secret, 'fra1'))
        .status(401)
        .detail('invalid enrollment token');
    });

    it('takes a literal token: weak 400, existing 409, free again after delete', async () => {
      const first = await enrollmentToken({ token: LITERAL });
      expect(first.secret).to.equal(LITERAL);
      expectResponse(await h.admin.post('/admin/enrollment-tokens', { token: LITERAL }))
        .status(409)
        .detail('enrollment token already exists');
      expectResponse(await h.admin.post('/admin/enrollment-tokens', { token: 'short' }))
        .status(400)
        .detail(INVALID_LITERAL);
      expectResponse(await h.admin.post('/admin/enrollment-tokens', { token: 'a'.repeat(60) }))
        .status(400)
        .detail(INVALID_LITERAL);
      await h.admin.delete(`/admin/enrollment-tokens/${first.token_id}`);
      await enrollmentToken({ token: LITERAL });
    });

    it('refuses an unknown node with 400 and an expiry in the past with 422', async () => {
      expectResponse(await h.admin.post('/admin/enrollment-tokens', { node_id: 'nope' }))
        .status(400)
        .detail('unknown node nope');
      expectResponse(await h.admin.post('/admin/enrollment-tokens', { expires_at: '2026-11-01T11:59:59Z' }))
        .status(422)
        .detail('invalid expires_at: must lie in the future');
      expectResponse(await h.admin.post('/admin/enrollment-tokens', { expires_at: 'tomorrow' })).status(422);
    });
  });

  describe('register', () => {
    it('accepts a node-bound one-time token for a provisioned node: agent token, generation, inventory, token spent', async () => {
      await provision('fra1');
      const t = await enrollmentToken({ node_id: 'fra1' });
      h.sys.clock.advance(1_000);
      const res = await register(t.secret, 'fra1');
      expectResponse(res).status(200);
      expect(res.body).to.have.keys('status', 'node_id', 'agent_id', 'agent_token', 'desired_state_generation', 'message');
      expect(res.body).to.deep.include({ status: 'accepted', node_id: 'fra1', desired_state_generation: 1 });
      expect(res.body.agent_id).to.match(/^agent-[0-9a-f]{16}$/);
      expect(res.body.agent_token).to.match(/^agt_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);

      const who = await h.whoami(res.body.agent_token);
      expect(who.body.agent).to.deep.equal({ node_id: 'fra1', token_id: res.body.agent_token.split('.')[0], agent_id: res.body.agent_id });
      expect((await h.admin.get('/admin/nodes/fra1')).body.inventory).to.deep.equal(inventory);
      expect((await h.admin.get('/admin/nodes/fra1/agent-tokens')).body.map((x: { agent_id: string }) => x.agent_id)).to.deep.equal([res.body.agent_id]);
      expect((await enrollmentRow(t.token_id)).used_at).to.equal('2026-11-01T12:00:01.000Z');

      const [reg] = await registrations();
      expect(reg).to.deep.include({
        node_id: 'fra1',
        status: 'approved',
        hostname: 'fra1.example.net',
        inventory,
        via: 'enrollment-token',
        enrollment_token_id: t.token_id,
        decided_by: `enrollment-token ${t.token_id}`,
        agent_id: res.body.agent_id,
        agent_token_id: res.body.agent_token.split('.')[0],
        accepted_at: '2026-11-01T12:00:01.000Z',
        requests: 1,
      });

      // One-time: the second use is refused.
      expectResponse(await register(t.secret, 'fra1'))
        .status(401)
        .detail('invalid enrollment token');
    });

    it('answers 401 for an unknown token, a bound-node mismatch and an expired token', async () => {
      await provision('fra1');
      await provision('ams1');
      expectResponse(await register('no-such-token', 'fra1'))
        .status(401)
        .detail('invalid enrollment token');
      const bound = await enrollmentToken({ node_id: 'fra1' });
      expectResponse(await register(bound.secret, 'ams1'))
        .status(401)
        .detail('enrollment token is not valid for node ams1');
      const expiring = await enrollmentToken({ expires_at: '2026-11-01T12:10:00Z' });
      h.sys.clock.advance(10 * 60_000);
      expectResponse(await register(expiring.secret, 'fra1'))
        .status(401)
        .detail('invalid enrollment token');
      // None of these refusals recorded a registration or spent the bound token.
      expect(await registrations()).to.deep.equal([]);
      expectResponse(await register(bound.secret, 'fra1'))
        .status(200)
        .body({ status: 'accepted' });
    });

    it('keeps an unbound or bootstrap registration pending until approved, without spending the token', async () => {
      await provision('fra1');
      const t = await enrollmentToken();
      const pending = await register(t.secret, 'fra1');
      expectResponse(pending).status(200);
      const [reg] = await registrations('pending');
      expect(pending.body).to.deep.equal({
        status: 'pending-approval',
        node_id: 'fra1',
        agent_id: null,
        agent_token: null,
        desired_state_generation: null,
        message: `registration ${reg.registration_id} of node fra1 is waiting for administrator approval`,
      });
      expect((await enrollmentRow(t.token_id)).used_at).to.equal(null);
      expectResponse(await register(BOOTSTRAP, 'fra1'))
        .status(200)
        .body({ status: 'pending-approval' });

      const approved = await h.admin.post(`/admin/registrations/${reg.registration_id}/approve`, { note: 'known host' });
      expectResponse(approved)
        .status(200)
        .body({ registration_id: reg.registration_id, status: 'approved', note: 'known host', decided_by: 'admin', decided_at: '2026-11-01T12:00:00.000Z' });
      expect(await registrations('pending')).to.deep.equal([]);

      const accepted = await register(t.secret, 'fra1');
      expectResponse(accepted).status(200).body({ status: 'accepted', node_id: 'fra1', desired_state_generation: 1 });
      expect((await enrollmentRow(t.token_id)).used_at).to.not.equal(null);
      expectResponse(await register(t.secret, 'fra1')).status(401);
    });

    it('reuses the bootstrap token (never spent); unset, it is refused', async () => {
      await provision('fra1');
      const [reg] = await (async () => {
        await register(BOOTSTRAP, 'fra1');
        return registrations();
      })();
      expect(reg).to.deep.include({ via: 'bootstrap', enrollment_token_id: null, status: 'pending' });
      await h.admin.post(`/admin/registrations/${reg.registration_id}/approve`);
      const one = await register(BOOTSTRAP, 'fra1');
      const two = await register(BOOTSTRAP, 'fra1');
      expectResponse(one).status(200).body({ status: 'accepted' });
      expectResponse(two).status(200).body({ status: 'accepted' });
      expect(one.body.agent_token).to.not.equal(two.body.agent_token);
      expect((await h.whoami(one.body.agent_token)).status).to.equal(200);
      expect((await h.whoami(two.body.agent_token)).status).to.equal(200);

      const off = await startAgentHarness();
      try {
        expectResponse(await off.anon.post('/agent/register', { enrollment_token: BOOTSTRAP, requested_node_id: 'fra1', inventory }))
          .status(401)
          .detail('invalid enrollment token');
      } finally {
        await off.close();
      }
    });

    it('is pending while the node is not provisioned or has no first generation, then accepted; the token stays unspent meanwhile', async () => {
      const t = await enrollmentToken();
      // An approved registration for a node that does not exist yet.
      expectResponse(await register(t.secret, 'new1'))
        .status(200)
        .body({ status: 'pending-approval' });
      const [reg] = await registrations();
      await h.admin.post(`/admin/registrations/${reg.registration_id}/approve`);
      expectResponse(await register(t.secret, 'new1'))
        .status(200)
        .body({ status: 'pending-approval', message: 'node new1 is not provisioned yet; retry later', agent_token: null });
      expectResponse(await h.admin.post('/admin/nodes', nodeBody('new1'))).status(201);
      expectResponse(await register(t.secret, 'new1'))
        .status(200)
        .body({ status: 'pending-approval', message: 'node new1 has no published desired state yet; retry later' });
      expect((await enrollmentRow(t.token_id)).used_at).to.equal(null);
      await h.admin.post('/admin/nodes/new1/interfaces', { spec: wg('dn42_a', 51801) });
      expectResponse(await register(t.secret, 'new1'))
        .status(200)
        .body({ status: 'accepted', desired_state_generation: 1 });
    });

    it('answers 403 for a rejected node, provisioned or not and whatever the token, until approved again', async () => {
      await provision('fra1');
      await register(BOOTSTRAP, 'fra1');
      const [reg] = await registrations();
      const rejected = await h.admin.post(`/admin/registrations/${reg.registration_id}/reject`, { note: 'unknown machine' });
      expectResponse(rejected).status(200).body({ status: 'rejected', note: 'unknown machine' });
      expectResponse(await register(BOOTSTRAP, 'fra1'))
        .status(403)
        .detail('node fra1 was rejected by an administrator');
      const bound = await enrollmentToken({ node_id: 'fra1' });
      expectResponse(await register(bound.secret, 'fra1'))
        .status(403)
        .detail('node fra1 was rejected by an administrator');
      expect((await enrollmentRow(bound.token_id)).used_at).to.equal(null);
      expect(await registrations('rejected')).to.have.length(1);

      // Any state: approve after reject, reject after approve.
      expectResponse(await h.admin.post(`/admin/registrations/${reg.registration_id}/approve`))
        .status(200)
        .body({ status: 'approved', note: null });
      expectResponse(await register(bound.secret, 'fra1'))
        .status(200)
        .body({ status: 'accepted' });
      expectResponse(await h.admin.post(`/admin/registrations/${reg.registration_id}/reject`))
        .status(200)
        .body({ status: 'rejected' });
      expectResponse(await register(BOOTSTRAP, 'fra1')).status(403);
    });

    it('records a repeated request at most every 5 minutes unless the inventory changes', async () => {
      for (let i = 0; i < 3; i++) await register(BOOTSTRAP, 'fra1');
      expect((await registrations())[0].requests).to.equal(1);
      await register(BOOTSTRAP, 'fra1', { ...inventory, os: 'debian-13' });
      expect((await registrations())[0]).to.deep.include({ requests: 2, inventory: { ...inventory, os: 'debian-13' } });
      h.sys.clock.advance(5 * 60_000);
      await register(BOOTSTRAP, 'fra1', { ...inventory, os: 'debian-13' });
      expect((await registrations())[0]).to.deep.include({ requests: 3, last_seen_at: '2026-11-01T12:05:00.000Z', first_seen_at: '2026-11-01T12:00:00.000Z' });
    });

    it('spends a one-time token once when two agents race with it', async () => {
      await provision('fra1');
      const t = await enrollmentToken({ node_id: 'fra1' });
      const answers = await Promise.all(Array.from({ length: 6 }, () => register(t.secret, 'fra1')));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).to.deep.equal([200, 401, 401, 401, 401, 401]);
      expect((await h.admin.get('/admin/nodes/fra1/agent-tokens')).body).to.have.length(1);
    });

    it('validates the body (422) and needs no Bearer', async () => {
      for (const body of [
        {},
        { enrollment_token: BOOTSTRAP, requested_node_id: 'fra1' },
        { enrollment_token: BOOTSTRAP, requested_node_id: 'bad id', inventory },
        { enrollment_token: BOOTSTRAP, requested_node_id: 'fra1', inventory: { ...inventory, has_systemd: 'yes' } },
        { enrollment_token: BOOTSTRAP, requested_node_id: 'fra1', inventory: { hostname: 'x' } },
      ]) {
        expectResponse(await h.anon.post('/agent/register', body)).status(422);
      }
    });
  });

  describe('registrations (admin)', () => {
    it('lists with a status filter, answers 404 for an unknown id and 422 for an unknown status', async () => {
      await register(BOOTSTRAP, 'a1');
      h.sys.clock.advance(1_000);
      await register(BOOTSTRAP, 'b1');
      const all = await registrations();
      expect(all.map((r: { node_id: string }) => r.node_id)).to.deep.equal(['a1', 'b1']);
      expect(all[0]).to.have.keys(
        'registration_id',
        'node_id',
        'status',
        'hostname',
        'inventory',
        'via',
        'enrollment_token_id',
        'client_address',
        'requests',
        'first_seen_at',
        'last_seen_at',
        'decided_at',
        'decided_by',
        'note',
        'agent_id',
        'agent_token_id',
        'accepted_at',
      );
      expect(all[0].registration_id).to.match(/^reg_[0-9a-f]{16}$/);
      expect(all[0].client_address).to.equal('127.0.0.1');
      await h.admin.post(`/admin/registrations/${all[1].registration_id}/reject`);
      expect((await registrations('pending')).map((r: { node_id: string }) => r.node_id)).to.deep.equal(['a1']);
      expect((await registrations('rejected')).map((r: { node_id: string }) => r.node_id)).to.deep.equal(['b1']);
      expect(await registrations('approved')).to.deep.equal([]);
      // Rejected and never provisioned: 403 as well.
      expectResponse(await register(BOOTSTRAP, 'b1'))
        .status(403)
        .detail('node b1 was rejected by an administrator');
      expectResponse(await h.admin.get('/admin/registrations?status=accepted')).status(422);
      expectResponse(await h.admin.post('/admin/registrations/reg_nope/approve', { note: 'x' }))
        .status(404)
        .detail('unknown registration reg_nope');
      expectResponse(await h.admin.post('/admin/registrations/reg_nope/reject'))
        .status(404)
        .detail('unknown registration reg_nope');
      expectResponse(await h.anon.get('/admin/registrations')).status(401);
    });
  });
});

describe('control: a rebuild of the agents projection reproduces tokens, enrollment tokens and registrations', () => {
  let h: AgentHarness;
  before(async () => {
    h = await startAgentHarness({ BOOTSTRAP_ENROLLMENT_TOKEN: BOOTSTRAP });
  });
  after(async () => {
    await h.close();
  });

  it('byte for byte, and every token resolves as before', async () => {
    const ok = async (res: Promise<{ status: number; text: string; body: any }>) => {
      const r = await res;
      expect(r.status, r.text).to.be.within(200, 299);
      return r.body;
    };
    const register = (enrollment_token: string, requested_node_id: string) =>
      ok(h.anon.post('/agent/register', { enrollment_token, requested_node_id, inventory }));
    for (const id of ['fra1', 'ams1', 'gone']) {
      await ok(h.admin.post('/admin/nodes', nodeBody(id)));
      await ok(h.admin.post(`/admin/nodes/${id}/interfaces`, { spec: wg('dn42_a', 51801) }));
    }
    const a = await ok(h.admin.post('/admin/nodes/fra1/agent-tokens', { agent_id: 'x', ttl_seconds: 60 }));
    h.sys.clock.advance(1_000);
    await ok(h.admin.post(`/admin/agent-tokens/${a.token.split('.')[0]}/rotate`));
    const b = await ok(h.admin.post('/admin/nodes/ams1/agent-tokens', {}));
    await ok(h.admin.delete(`/admin/agent-tokens/${b.token.split('.')[0]}`));
    const gone = await ok(h.admin.post('/admin/nodes/gone/agent-tokens', {}));
    const bound = await ok(h.admin.post('/admin/enrollment-tokens', { node_id: 'fra1', description: 'd' }));
    const spare = await ok(h.admin.post('/admin/enrollment-tokens', { token: LITERAL }));
    const deleted = await ok(h.admin.post('/admin/enrollment-tokens', {}));
    await ok(h.admin.delete(`/admin/enrollment-tokens/${deleted.token_id}`));
    h.sys.clock.advance(1_000);
    const accepted = await register(bound.secret, 'fra1');
    await register(spare.secret, 'ams1');
    await register(BOOTSTRAP, 'new1');
    const regs = (await h.admin.get('/admin/registrations')).body.registrations;
    await ok(h.admin.post(`/admin/registrations/${regs[1].registration_id}/approve`, { note: 'ok' }));
    await ok(h.admin.post(`/admin/registrations/${regs[2].registration_id}/reject`));
    await ok(h.admin.post('/admin/nodes/gone/decommission'));
    await ok(h.admin.delete('/admin/nodes/gone'));

    const snapshot = async () => {
      const out: Record<string, string> = {};
      for (const path of [
        '/admin/nodes/fra1/agent-tokens',
        '/admin/nodes/ams1/agent-tokens',
        '/admin/enrollment-tokens',
        '/admin/registrations',
        '/admin/nodes/fra1',
      ]) {
        out[path] = (await h.admin.get(path)).text;
      }
      out.gone = JSON.stringify((await h.sys.pool.query(`SELECT * FROM agent_tokens WHERE node_id = 'gone'`)).rows);
      for (const token of [accepted.agent_token, gone.token, a.token, b.token]) out[token] = JSON.stringify(await h.whoami(token));
      return out;
    };
    const before = await snapshot();
    expect(JSON.parse(before[gone.token]).status).to.equal(401);
    expect(JSON.parse(before[accepted.agent_token]).status).to.equal(200);
    await h.sys.projections.rebuild(['agents', 'fleet']);
    expect(await snapshot()).to.deep.equal(before);
  });
});
