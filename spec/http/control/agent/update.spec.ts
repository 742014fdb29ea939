import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { agentSocket, ADMIN_TOKEN, disconnect, poolQuiet, pong, settle, startControl, type ControlInstance } from '../../../support/agent-socket.js';
import { eventually } from '../../../support/wait.js';
import { agentAuth, issueAgentToken } from '../../../support/agents.js';
import { expectResponse, type ApiResponse } from '../../../support/http.js';
import { node } from '../fleet/support.js';
import { uploadRelease } from '../../../support/releases.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('agent self-update', () => {
  let c: ControlInstance;
  let token: string;
  const tgz = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));

  before(async () => {
    c = await startControl();
    await c.admin.post('/admin/nodes', node('fra1'));
    await c.admin.post('/admin/nodes', node('ams1', { router_id: '172.20.0.2' }));
    token = (await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1')).token;
  });
  after(() => c.close());

  const agentGet = (path: string, t = token) => fetch(`${c.url}/control/v1/agent/update${path}`, { headers: agentAuth(t) });

  describe('GET /agent/update/manifest and wheels', () => {
    it('answers 401 without an agent token', async () => {
      expect((await fetch(`${c.url}/control/v1/agent/update/manifest`)).status).to.equal(401);
      expect((await agentGet('/manifest', 'agt_x.nothing')).status).to.equal(401);
      expect(
        (await fetch(`${c.url}/control/v1/agent/update/wheels/1.0.200/dn42_agent-1.0.200.tgz`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status,
      ).to.equal(401);
    });

    it('answers 204 without a target, also when releases exist', async () => {
      expect((await agentGet('/manifest')).status).to.equal(204);
      expectResponse(await uploadRelease(c.url, '1.0.200', [{ name: 'dn42_agent-1.0.200.tgz', content: tgz }])).status(201);
      expect((await agentGet('/manifest')).status).to.equal(204);
    });

    it("serves the target's manifest and files whose bytes match its sha256", async () => {
      expectResponse(await c.admin.post('/admin/agent-releases/target', { version: '1.0.200' })).status(200);
      const manifest = await agentGet('/manifest');
      expect(manifest.status).to.equal(200);
      const body = await manifest.json();
      expect(body).to.deep.equal({ version: '1.0.200', wheels: [{ filename: 'dn42_agent-1.0.200.tgz', sha256: sha256(tgz), size: tgz.length }] });
      const file = await agentGet('/wheels/1.0.200/dn42_agent-1.0.200.tgz');
      expect(file.status).to.equal(200);
      expect(file.headers.get('content-type')).to.equal('application/octet-stream');
      const bytes = Buffer.from(await file.arrayBuffer());
      expect(sha256(bytes)).to.equal(body.wheels[0].sha256);
      expect(bytes.length).to.equal(body.wheels[0].size);
    });

    it('answers 404 for a file the release does not have, or a release that does not exist', async () => {
      expect((await agentGet('/wheels/1.0.200/other.tgz')).status).to.equal(404);
      expect((await agentGet('/wheels/1.0.201/dn42_agent-1.0.200.tgz')).status).to.equal(404);
    });

    it('answers 422 for versions and file names outside the allow-list', async () => {
      expect((await agentGet('/wheels/1.0.200/..%2F..%2Fetc%2Fpasswd.whl')).status).to.equal(422);
      expect((await agentGet('/wheels/1.0.200/secret.txt')).status).to.equal(422);
      expect((await agentGet('/wheels/latest/dn42_agent-1.0.200.tgz')).status).to.equal(422);
    });

    it('answers every invalid version or file name with the same invalid detail, however long', async () => {
      const long = '1'.repeat(40);
      expectResponse(await toResponse(agentGet(`/wheels/${long}.0.0/dn42_agent-1.0.200.tgz`)))
        .status(422)
        .detail(/^invalid version: "1{40}/);
      expectResponse(await toResponse(agentGet(`/wheels/1.0.200/${'a'.repeat(250)}.tgz`)))
        .status(422)
        .detail(/^invalid file name: "a+/);
      expectResponse(await toResponse(agentGet('/wheels/latest/dn42_agent-1.0.200.tgz')))
        .status(422)
        .detail('invalid version: "latest" must match x.y.z');
    });
  });

  describe('agent_update_available', () => {
    it('is sent once per target when a heartbeat reports an older version, across reconnects', async () => {
      const agent = agentSocket(c.url, 'ws/fra1', token);
      await agent.next('hello');
      agent.send({ type: 'heartbeat', agent_version: '1.0.190', applied_generation: null, apply_status: null });
      const offer = await agent.next('agent_update_available');
      expect(offer).to.deep.equal({
        type: 'agent_update_available',
        version: '1.0.200',
        wheels: [{ filename: 'dn42_agent-1.0.200.tgz', sha256: sha256(tgz), size: tgz.length }],
        reason: offer.reason,
      });
      agent.send({ type: 'heartbeat', agent_version: '1.0.190', applied_generation: null, apply_status: null });
      await disconnect(c, agent, 'fra1');

      const again = agentSocket(c.url, 'ws/fra1', token);
      await again.next('hello');
      again.send({ type: 'heartbeat', agent_version: '1.0.190', applied_generation: null, apply_status: null });
      again.send({ type: 'heartbeat', agent_version: '1.0.191', applied_generation: null, apply_status: null });
      expect((await settle(c, again, 'fra1')).map((m) => m.type)).to.deep.equal(['hello']);
      await disconnect(c, again, 'fra1');
    });

    it('is not sent for an agent at or above the target, or with an unreadable version (strict numeric compare)', async () => {
      const ams = await issueAgentToken(c.url, ADMIN_TOKEN, 'ams1');
      const agent = agentSocket(c.url, 'ws/ams1', ams.token);
      await agent.next('hello');
      for (const v of ['1.0.200', '1.0.1000', '2.0.0', '1.0.200-rc1', 'garbage'])
        agent.send({ type: 'heartbeat', agent_version: v, applied_generation: 1, apply_status: 'ok' });
      expect((await settle(c, agent, 'ams1')).map((m) => m.type)).to.deep.equal(['hello']);
      // 1.0.99 is below 1.0.200 numerically (but not as text).
      agent.send({ type: 'heartbeat', agent_version: '1.0.99', applied_generation: 1, apply_status: 'ok' });
      expect((await agent.next('agent_update_available')).version).to.equal('1.0.200');
      await disconnect(c, agent, 'ams1');
    });

    it('rings connected agents below a newly set target at once, once; setting it again re-arms', async () => {
      const agent = agentSocket(c.url, 'ws/fra1', token);
      await agent.next('hello');
      agent.send({ type: 'heartbeat', agent_version: '1.0.190', applied_generation: null, apply_status: null });
      await pong(agent);
      await poolQuiet(c.sys.pool); // the heartbeat is recorded and its own offer check is over
      expectResponse(await uploadRelease(c.url, '1.0.201', [{ name: 'dn42_agent-1.0.201.tgz', content: Buffer.from('201') }])).status(201);
      const set = await c.admin.post('/admin/agent-releases/target', { version: '1.0.201' });
      expect(set.body).to.deep.equal({ target: '1.0.201', offered: ['fra1'] });
      expect((await agent.next('agent_update_available')).version).to.equal('1.0.201');
      agent.send({ type: 'heartbeat', agent_version: '1.0.190', applied_generation: null, apply_status: null });
      expect((await settle(c, agent, 'fra1')).filter((m) => m.type === 'agent_update_available')).to.have.length(1);
      // The operator retries the same target: offered once more.
      expect((await c.admin.post('/admin/agent-releases/target', { version: '1.0.201' })).body.offered).to.deep.equal(['fra1']);
      expect(await agent.next('agent_update_available')).to.include({ version: '1.0.201' });
      await disconnect(c, agent, 'fra1');
    });

    it('does not use up the offer on an agent that left before it could be delivered', async () => {
      const ams = await issueAgentToken(c.url, ADMIN_TOKEN, 'ams1');
      await c.sys.pool.query(`DELETE FROM agent_update_offers WHERE node_id = 'ams1'`);
      const target = (await c.admin.get('/admin/agent-releases')).body.target;
      const leaving = agentSocket(c.url, 'ws/ams1', ams.token);
      await leaving.next('hello');
      // Hold the heartbeat's write until the agent is gone.
      const blocker = await c.sys.pool.connect();
      try {
        await blocker.query('BEGIN');
        await blocker.query('LOCK TABLE agent_liveness IN ACCESS EXCLUSIVE MODE');
        leaving.send({ type: 'heartbeat', agent_version: '1.0.1', applied_generation: null, apply_status: null });
        await eventually(
          async () =>
            (
              await c.sys.pool.query(
                `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%agent_liveness%'`,
              )
            ).rowCount === 1,
          { what: 'the heartbeat write waiting for the lock' },
        );
        await disconnect(c, leaving, 'ams1');
        await blocker.query('COMMIT');
      } finally {
        blocker.release();
      }
      await eventually(async () => (await c.sys.pool.query(`SELECT 1 FROM agent_liveness WHERE node_id = 'ams1' AND agent_version = '1.0.1'`)).rowCount === 1);
      await poolQuiet(c.sys.pool); // its offer was claimed and given back, or never claimed
      expect((await c.sys.pool.query(`SELECT 1 FROM agent_update_offers WHERE node_id = 'ams1'`)).rowCount).to.equal(0);

      const back = agentSocket(c.url, 'ws/ams1', ams.token);
      await back.next('hello');
      back.send({ type: 'heartbeat', agent_version: '1.0.1', applied_generation: null, apply_status: null });
      expect(await back.next('agent_update_available')).to.include({ version: target });
      await disconnect(c, back, 'ams1');
    });

    it('lists files in one byte-wise order in the upload response, the manifest and the offer', async () => {
      const agent = agentSocket(c.url, 'ws/fra1', token);
      await agent.next('hello');
      agent.send({ type: 'heartbeat', agent_version: '1.0.190', applied_generation: null, apply_status: null });
      await pong(agent);
      await poolQuiet(c.sys.pool); // the heartbeat is recorded before the target is set
      const names = ['a_b.whl', 'a-b.whl', 'a.b.whl', 'a.whl', 'B.whl'];
      const byteOrder = ['B.whl', 'a-b.whl', 'a.b.whl', 'a.whl', 'a_b.whl'];
      const uploaded = await uploadRelease(
        c.url,
        '1.0.202',
        names.map((name) => ({ name, content: Buffer.from(name) })),
      );
      expectResponse(uploaded).status(201);
      expect(uploaded.body.wheels.map((w: { filename: string }) => w.filename)).to.deep.equal(byteOrder);
      expectResponse(await c.admin.post('/admin/agent-releases/target', { version: '1.0.202' })).status(200);
      const manifest = await (await agentGet('/manifest')).json();
      expect(manifest.wheels.map((w: { filename: string }) => w.filename)).to.deep.equal(byteOrder);
      expect((await agent.next('agent_update_available')).wheels).to.deep.equal(uploaded.body.wheels);
      await disconnect(c, agent, 'fra1');
    });
  });
});

/** A fetch response in the shape `expectResponse` reads. */
async function toResponse(pending: Promise<Response>): Promise<ApiResponse> {
  const res = await pending;
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}
