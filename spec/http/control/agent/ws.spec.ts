import { expect } from 'chai';
import { WebSocket } from 'ws';
import { revokeAgentToken } from '../../../../commands/agent-tokens.js';
import { onlineAgentCount } from '../../../../infra/agent-hub/presence.js';
import { QUEUE_LIMIT } from '../../../../infra/agent-hub/hub.js';
import { DOORBELL_CHANNEL } from '../../../../infra/doorbell.js';
import { agentStatuses } from '../../../../infra/telemetry/liveness.js';
import { agentSocket, ADMIN_TOKEN, disconnect, poolQuiet, pong, ringBarrier, startControl, type ControlInstance } from '../../../support/agent-socket.js';
import { eventually, within } from '../../../support/wait.js';
import { issueAgentToken } from '../../../support/agents.js';
import { expectResponse } from '../../../support/http.js';
import { node, wg } from '../fleet/support.js';

describe('WS /agent/ws/{node_id}', () => {
  let c: ControlInstance;
  let token: string;

  before(async () => {
    c = await startControl();
    expectResponse(await c.admin.post('/admin/nodes', node('fra1'))).status(201);
    expectResponse(await c.admin.post('/admin/nodes', node('ams1', { router_id: '172.20.0.2' }))).status(201);
    expectResponse(await c.admin.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_a', 51801) })).status(201);
    token = (await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1')).token;
  });
  after(() => c.close());

  describe('handshake', () => {
    it('closes with 4401 without a token, with a wrong one, and with a token only in the query', async () => {
      expect((await agentSocket(c.url, 'ws/fra1').closed).code).to.equal(4401);
      expect((await agentSocket(c.url, 'ws/fra1', 'agt_nothere.secretsecretsecret').closed).code).to.equal(4401);
      expect((await agentSocket(c.url, `ws/fra1?token=${encodeURIComponent(token)}`).closed).code).to.equal(4401);
      expect((await agentSocket(c.url, 'ws/fra1', undefined, { authorization: `Basic ${token}` }).closed).code).to.equal(4401);
    });

    it('closes with 4401 once the token is revoked', async () => {
      const issued = await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1');
      expectResponse(await c.admin.delete(`/admin/agent-tokens/${issued.token_id}`)).status(204);
      const client = agentSocket(c.url, 'ws/fra1', issued.token);
      expect((await client.closed).code).to.equal(4401);
      expect(client.messages).to.deep.equal([]);
    });

    it('closes with 4403 when the token is bound to another node, before any hello', async () => {
      const client = agentSocket(c.url, 'ws/ams1', token);
      expect((await client.closed).code).to.equal(4403);
      expect(client.messages).to.deep.equal([]);
      expect(await onlineAgentCount(c.sys.pool, 'ams1')).to.equal(0);
    });

    it('refuses other paths under /agent with 404 and no upgrade', async () => {
      const client = agentSocket(c.url, 'nothing/fra1', token);
      const status = await new Promise<number>((resolve) =>
        client.ws.on('unexpected-response', (req, res) => {
          resolve(res.statusCode ?? 0);
          req.destroy();
        }),
      );
      expect(status).to.equal(404);
    });
  });

  describe('hello and doorbells', () => {
    it('sends hello with the current generation first', async () => {
      const client = agentSocket(c.url, 'ws/fra1', token);
      expect(await client.next()).to.deep.equal({ type: 'hello', node_id: 'fra1', generation: 1 });
      await disconnect(c, client, 'fra1');
    });

    it('leaves the generation out of hello for a node without a desired state', async () => {
      const ams = await issueAgentToken(c.url, ADMIN_TOKEN, 'ams1');
      const client = agentSocket(c.url, 'ws/ams1', ams.token);
      expect(await client.next()).to.deep.equal({ type: 'hello', node_id: 'ams1' });
      await disconnect(c, client, 'ams1');
    });

    it('rings desired_state_updated (without node_id) after a fleet write commits, to this node only', async () => {
      const fra = agentSocket(c.url, 'ws/fra1', token);
      const ams = agentSocket(c.url, 'ws/ams1', (await issueAgentToken(c.url, ADMIN_TOKEN, 'ams1')).token);
      await fra.next('hello');
      await ams.next('hello');
      const created = await c.admin.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_b', 51802) });
      expectResponse(created).status(201);
      const event = await fra.next();
      expect(event).to.deep.equal({ type: 'desired_state_updated', generation: 2, reason: event.reason });
      expect(event.reason).to.be.a('string');
      const generations = await c.admin.get('/admin/nodes/fra1/generations?limit=1');
      expect(generations.body.generations[0].generation).to.equal(2);
      expect((await ringBarrier(c, ams, 'ams1')).map((m) => m.type)).to.deep.equal(['hello']);
      await disconnect(c, fra, 'fra1');
      await disconnect(c, ams, 'ams1');
    });

    it('delivers to every connection of the node and counts them in the write response', async () => {
      const a = agentSocket(c.url, 'ws/fra1', token);
      const b = agentSocket(c.url, 'ws/fra1', token);
      await a.next('hello');
      await b.next('hello');
      const rollback = await c.admin.post('/admin/nodes/fra1/generations/1/rollback');
      expectResponse(rollback).status(200).body({ subscribers: 2, delivered: 2 });
      expect((await a.next('desired_state_updated')).generation).to.equal(rollback.body.new_generation);
      expect((await b.next('desired_state_updated')).generation).to.equal(rollback.body.new_generation);
      await disconnect(c, a, 'fra1');
      await disconnect(c, b, 'fra1');
    });

    it('carries probe and log requests with their business data', async () => {
      const client = agentSocket(c.url, 'ws/fra1', token);
      await client.next('hello');
      await c.sys.doorbell.ring([
        { type: 'probe_request', node_id: 'fra1', probe_id: 'p1', spec: { kind: 'ping', target: '172.20.0.1' } },
        { type: 'log_request', node_id: 'fra1', log_id: 'l1', spec: { mode: 'snapshot' } },
        { type: 'snapshot_request', node_id: 'fra1', reason: 'operator' },
      ]);
      expect(await client.next()).to.deep.equal({ type: 'probe_request', probe_id: 'p1', spec: { kind: 'ping', target: '172.20.0.1' } });
      expect(await client.next()).to.deep.equal({ type: 'log_request', log_id: 'l1', spec: { mode: 'snapshot' } });
      expect(await client.next()).to.deep.equal({ type: 'snapshot_request', reason: 'operator' });
      await disconnect(c, client, 'fra1');
    });
  });

  describe('upstream', () => {
    it('records a heartbeat in the liveness registry', async () => {
      const client = agentSocket(c.url, 'ws/fra1', token);
      await client.next('hello');
      client.send({ type: 'heartbeat', agent_version: '1.0.190', applied_generation: 2, apply_status: 'ok' });
      await eventually(async () => (await agentStatuses(c.sys.pool, ['fra1'])).length === 1);
      const [row] = await agentStatuses(c.sys.pool, ['fra1']);
      expect(row).to.deep.include({ node_id: 'fra1', agent_version: '1.0.190', applied_generation: 2, apply_status: 'ok' });
      expect(row.last_seen?.toISOString()).to.equal(c.sys.clock.now().toISOString());
      await disconnect(c, client, 'fra1');
    });

    it('ignores everything else upstream and keeps the connection', async () => {
      const client = agentSocket(c.url, 'ws/ams1', (await issueAgentToken(c.url, ADMIN_TOKEN, 'ams1')).token);
      await client.next('hello');
      client.ws.send('not json');
      client.send({ type: 'apply_result', node_id: 'ams1' });
      client.send({ type: 'heartbeat', agent_version: 12 });
      client.ws.send(Buffer.from([1, 2, 3]), { binary: true });
      client.send({ type: 'hello' });
      // Barrier: the server has read all of it, and whatever it started has ended.
      await pong(client);
      await poolQuiet(c.sys.pool);
      expect(await agentStatuses(c.sys.pool, ['ams1'])).to.deep.equal([]);
      await c.sys.doorbell.ring([{ type: 'snapshot_request', node_id: 'ams1' }]);
      expect(await client.next('snapshot_request')).to.deep.equal({ type: 'snapshot_request' });
      expect(client.ws.readyState).to.equal(client.ws.OPEN);
      await disconnect(c, client, 'ams1');
    });
  });

  describe('event queue', () => {
    it(`drops events beyond ${QUEUE_LIMIT} queued on a connection and counts them`, async () => {
      const client = agentSocket(c.url, 'ws/fra1', token);
      await client.next('hello');
      const before = c.sockets.hub.droppedTotal;
      const burst = Array.from({ length: 100 }, (_, i) => ({ type: 'snapshot_request' as const, node_id: 'fra1', reason: `burst ${i}` }));
      const deliveries = await c.sys.doorbell.ring(burst);
      expect(deliveries.filter((d) => d.delivered === 1)).to.have.length(QUEUE_LIMIT);
      expect(deliveries.every((d) => d.subscribers === 1)).to.equal(true);
      expect(c.sockets.hub.droppedTotal - before).to.equal(100 - QUEUE_LIMIT);
      // Written events leave the queue: once the client has them, the next event goes through again,
      // and it arrives after every event of the burst that was sent (the barrier).
      await eventually(() => client.messages.filter((m) => m.type === 'snapshot_request').length >= QUEUE_LIMIT, { what: 'the queued events' });
      await eventually(async () => (await c.sys.doorbell.ring([{ type: 'snapshot_request', node_id: 'fra1', reason: 'after' }]))[0].delivered === 1, {
        what: 'an event taken again',
      });
      await client.next((m) => m.reason === 'after');
      const received = client.messages.filter((m) => m.type === 'snapshot_request' && m.reason !== 'after');
      expect(received.map((m) => m.reason)).to.deep.equal(burst.slice(0, QUEUE_LIMIT).map((e) => e.reason));
      await disconnect(c, client, 'fra1');
    });

    it('fills the queue of an agent that stops reading, then drops', async () => {
      const client = agentSocket(c.url, 'ws/fra1', token);
      await client.next('hello');
      // The agent stops reading: kernel buffers fill, writes stop completing, the queue fills.
      (client.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      const before = c.sockets.hub.droppedTotal;
      const big = 'x'.repeat(190);
      for (let round = 0; round < 400 && c.sockets.hub.droppedTotal === before; round++) {
        await c.sys.doorbell.ring(Array.from({ length: 50 }, () => ({ type: 'snapshot_request' as const, node_id: 'fra1', reason: big })));
        await new Promise((r) => setImmediate(r));
      }
      expect(c.sockets.hub.droppedTotal).to.be.greaterThan(before);
      client.ws.terminate();
      await eventually(() => c.sockets.hub.connectionCount('fra1') === 0);
    });
  });

  describe('the token of an open socket', () => {
    it('closes the socket with 4401 when its token is revoked; other tokens of the node stay', async () => {
      const issued = await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1');
      const doomed = agentSocket(c.url, 'ws/fra1', issued.token);
      const other = agentSocket(c.url, 'ws/fra1', token);
      await doomed.next('hello');
      await other.next('hello');
      expectResponse(await c.admin.delete(`/admin/agent-tokens/${issued.token_id}`)).status(204);
      expect((await within(doomed.closed, 3000)).code).to.equal(4401);
      await eventually(() => c.sockets.hub.connectionCount('fra1') === 1);
      expectResponse(await c.admin.post('/admin/nodes/fra1/notify', { event: 'snapshot_request' }))
        .status(200)
        .body({ subscribers: 1, delivered: 1 });
      expect((await other.next('snapshot_request')).type).to.equal('snapshot_request');
      expect(doomed.messages.map((m) => m.type)).to.deep.equal(['hello']);
      await disconnect(c, other, 'fra1');
    });

    it('closes the socket of a rotated token with 4401; its successor connects', async () => {
      const issued = await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1');
      const old = agentSocket(c.url, 'ws/fra1', issued.token);
      await old.next('hello');
      const rotated = await c.admin.post(`/admin/agent-tokens/${issued.token_id}/rotate`, {});
      expectResponse(rotated).status(201);
      expect((await within(old.closed, 3000)).code).to.equal(4401);
      const successor = agentSocket(c.url, 'ws/fra1', rotated.body.token);
      await successor.next('hello');
      await disconnect(c, successor, 'fra1');
    });

    it('closes the socket with 4401 once its token expires by the service clock', async () => {
      const issued = await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1', { ttl_seconds: 1 });
      const client = agentSocket(c.url, 'ws/fra1', issued.token);
      await client.next('hello');
      // Wall time passes the token's expiry; the server's expiry timer (armed before this one, so run first) fires meanwhile.
      await new Promise((r) => setTimeout(r, 1300));
      // The service clock has not moved: a ring sent now still reaches the open socket (a close would come first).
      expect((await ringBarrier(c, client, 'fra1')).map((m) => m.type)).to.deep.equal(['hello']);
      c.sys.clock.advance(1000);
      expect((await within(client.closed, 3000)).code).to.equal(4401);
      c.sys.clock.advance(-1000);
    });

    it('a revocation whose notification was lost closes the socket at the next token check', async () => {
      const issued = await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1');
      const client = agentSocket(c.url, 'ws/fra1', issued.token);
      await client.next('hello');
      // Revoked through the command alone: no notification goes out.
      await revokeAgentToken({ store: c.sys.context.store, db: c.sys.pool }, issued.token_id, c.sys.clock.now(), { actor: 'spec' });
      // Barrier on the notification channel: a doorbell NOTIFY sent after the revocation committed reaches the
      // socket through the same LISTEN connection; a revocation notice would have closed the socket before it.
      await c.sys.pool.query(`SELECT pg_notify($1, $2)`, [
        DOORBELL_CHANNEL,
        JSON.stringify({ origin: 'spec', events: [{ type: 'snapshot_request', node_id: 'fra1', reason: 'after the revocation' }] }),
      ]);
      expect(await client.next('snapshot_request')).to.deep.equal({ type: 'snapshot_request', reason: 'after the revocation' });
      expect(client.ws.readyState).to.equal(client.ws.OPEN);
      expect(await c.sockets.checkTokens()).to.equal(1);
      expect((await within(client.closed, 3000)).code).to.equal(4401);
    });
  });

  describe('presence', () => {
    it('counts a connected agent until it disconnects', async () => {
      const client = agentSocket(c.url, 'ws/ams1', (await issueAgentToken(c.url, ADMIN_TOKEN, 'ams1')).token);
      await client.next('hello');
      expect(await onlineAgentCount(c.sys.pool, 'ams1')).to.equal(1);
      await client.close();
      await eventually(async () => (await onlineAgentCount(c.sys.pool, 'ams1')) === 0);
    });

    it('leaves no presence row behind for agents that close right after the handshake (race with the insert)', async () => {
      const ams = (await issueAgentToken(c.url, ADMIN_TOKEN, 'ams1')).token;
      const url = `${c.url.replace(/^http/, 'ws')}/control/v1/agent/ws/ams1`;
      const dropOnOpen = () =>
        new Promise<void>((resolve) => {
          const ws = new WebSocket(url, { headers: { authorization: `Bearer ${ams}` } });
          ws.on('open', () => ws.close());
          ws.on('error', () => resolve());
          ws.on('close', () => resolve());
        });
      for (let round = 0; round < 10; round++) await Promise.all(Array.from({ length: 30 }, dropOnOpen));
      await eventually(() => c.sockets.hub.connectionCount('ams1') === 0);
      await eventually(async () => (await c.sys.pool.query(`SELECT 1 FROM agent_connections WHERE node_id = 'ams1'`)).rowCount === 0, 5000);
      await poolQuiet(c.sys.pool); // every presence insert and removal has ended: a late insert would be in now
      const { rows } = await c.sys.pool.query(`SELECT count(*)::int AS n FROM agent_connections WHERE node_id = 'ams1'`);
      expect(rows[0].n).to.equal(0);
      expectResponse(await c.admin.post('/admin/nodes/ams1/notify', { event: 'snapshot_request' }))
        .status(409)
        .detail('node ams1 has no connected agent');
    });

    it("stops counting a crashed instance's agents once its heartbeat expires", async () => {
      const client = agentSocket(c.url, 'ws/ams1', (await issueAgentToken(c.url, ADMIN_TOKEN, 'ams1')).token);
      await client.next('hello');
      await c.sys.pool.query(`UPDATE agent_hub_instances SET heartbeat_at = now() - interval '31 seconds'`);
      expect(await onlineAgentCount(c.sys.pool, 'ams1')).to.equal(0);
      await c.sys.pool.query(`UPDATE agent_hub_instances SET heartbeat_at = now()`);
      expect(await onlineAgentCount(c.sys.pool, 'ams1')).to.equal(1);
      await disconnect(c, client, 'ams1');
    });
  });
});

describe('agent sockets on shutdown', () => {
  it('closes every agent socket with 1001 and removes the instance presence', async () => {
    const c = await startControl();
    try {
      await c.admin.post('/admin/nodes', node('fra1'));
      const { token } = await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1');
      const client = agentSocket(c.url, 'ws/fra1', token);
      await client.next('hello');
      await c.sockets.close();
      expect((await client.closed).code).to.equal(1001);
      const { rows } = await c.sys.pool.query(`SELECT count(*)::int AS n FROM agent_connections`);
      expect(rows[0].n).to.equal(0);
    } finally {
      await c.close();
    }
  });
});
