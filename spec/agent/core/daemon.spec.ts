import { expect } from 'chai';
import { bgpProtocolName } from '../../../agent/render/index.js';
import { join } from 'node:path';
import { ADMIN_TOKEN } from '../../support/agent-socket.js';
import { api, expectResponse } from '../../support/http.js';
import { freePort } from '../../support/ports.js';
import { createTestSystem, type TestSystem } from '../../support/system.js';
import { eventually } from '../../support/wait.js';
import { listenControl as listen, type ListeningControl } from '../support/control.js';
import { spawnAgent, startBird, tempDir, writeAgentConfig, type AgentProcess, type Bird } from '../support/core.js';

/** The line of `birdc show protocols` of a session's BGP protocol. */
const listed = (name: string) => new RegExp(`^${bgpProtocolName({ name })}\\s+BGP`, 'm');
const session = (name: string, neighbor_address: string) => ({ spec: { name, remote_asn: 4242420002, neighbor_address } });

/**
 * End to end: a control server and the agent daemon as its own process (the
 * real `dn42-agent`), a real BIRD. Registration waits for the first
 * generation, the doorbell brings the next one, heartbeats show the applied
 * generation, and a control server that goes away and comes back on the same
 * port is found again after backoff.
 */
describe('agent: daemon end to end', function () {
  this.timeout(180_000);
  let sys: TestSystem;
  let server: ListeningControl;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let bird: Bird;
  let agent: AgentProcess | undefined;

  beforeEach(async () => {
    dir = await tempDir();
    sys = await createTestSystem({ env: { ADMIN_TOKEN } });
    bird = await startBird(dir.path);
  });
  afterEach(async () => {
    await agent?.stop('SIGKILL');
    await server?.close();
    await bird.stop();
    await sys.close();
    await dir.remove();
  });

  it('registers once generation 1 exists, applies it, applies generation 2 on the doorbell, reports liveness, and reconnects after the server returns', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const admin = api(`${url}/control/v1`, { token: ADMIN_TOKEN });
    server = await listen(sys, port);
    expectResponse(await admin.post('/admin/nodes', { node_id: 'fra1', asn: 4242420001, router_id: '172.20.0.1', ipv4_prefixes: ['172.20.0.0/27'] })).status(
      201,
    );
    const enrollment = await admin.post('/admin/enrollment-tokens', { node_id: 'fra1' });
    const config = await writeAgentConfig(join(dir.path, 'agent.conf'), {
      controller_url: url,
      enrollment_token: enrollment.body.secret,
      requested_node_id: 'fra1',
      state_dir: join(dir.path, 'state'),
      bird_socket: bird.socket,
      bird_kernel: false,
      log_level: 'debug',
    });
    agent = spawnAgent(['--config', config]);
    const logged = (msg: string | RegExp) => agent!.logs().filter((l) => (typeof msg === 'string' ? l.msg === msg : msg.test(l.msg)));
    const health = async () => (await admin.get('/admin/nodes/fra1/health')).body;

    // No generation yet: pending-approval, retried.
    await eventually(() => logged(/^registration pending/).length >= 1, 30_000, 'a pending registration');
    expectResponse(await admin.post('/admin/nodes/fra1/bgp-sessions', session('peer_a', '172.20.53.1'))).status(201);
    await eventually(async () => (await health()).applied_generation === 1, 30_000, 'generation 1 applied and heartbeated');
    expect(logged('enrolled')).to.have.length(1);
    expect(await bird.birdc('show', 'protocols')).to.match(listed('peer_a'));

    // The doorbell: the safety reconcile runs every 300 s, so only the event can bring generation 2 this fast.
    await eventually(() => server.sockets.hub.connectionCount('fra1') === 1, 15_000, 'the agent channel');
    expectResponse(await admin.post('/admin/nodes/fra1/bgp-sessions', session('peer_b', '172.20.53.2'))).status(201);
    await eventually(async () => (await health()).applied_generation === 2, 15_000, 'generation 2 applied');
    const h = await health();
    expect(h).to.deep.include({ liveness: 'online', current_generation: 2, last_apply_status: 'succeeded' });
    expect(h.agent_version).to.match(/^\d+\.\d+\.\d+$/);
    expect(await bird.birdc('show', 'protocols')).to.match(listed('peer_b'));

    // snapshot_request reaches the telemetry service.
    const snapshots = async () => (await admin.get('/admin/nodes/fra1/status-events?kind=snapshot&limit=500')).body.events.length as number;
    const before = await snapshots();
    expectResponse(await admin.post('/admin/nodes/fra1/notify', { event: 'snapshot_request', reason: 'spec' }))
      .status(200)
      .body({ delivered: 1 });
    await eventually(async () => (await snapshots()) > before, 15_000, 'a runtime snapshot on request');

    // The server goes away: the agent backs off (1 s, 2 s, 4 s ... plus jitter) and comes back when it returns.
    const closesBefore = logged('agent channel closed; reconnecting').length;
    await server.close();
    await eventually(() => logged('agent channel closed; reconnecting').length >= closesBefore + 3, 20_000, 'three reconnect attempts');
    server = await listen(sys, port);
    await eventually(() => server.sockets.hub.connectionCount('fra1') === 1, 20_000, 'the agent back on the restarted server');
    const delays = logged('agent channel closed; reconnecting')
      .slice(closesBefore, closesBefore + 3)
      .map((l) => l.retry_in_ms as number);
    expect(delays[0]).to.be.within(1000, 1250);
    expect(delays[1]).to.be.within(2000, 2500);
    expect(delays[2]).to.be.within(4000, 5000);

    expectResponse(await admin.post('/admin/nodes/fra1/bgp-sessions', session('peer_c', '172.20.53.3'))).status(201);
    await eventually(async () => (await health()).applied_generation === 3, 15_000, 'generation 3 applied after the reconnect');

    expect(await agent.stop('SIGTERM')).to.equal(0);
    expect(logged('daemon stopped')).to.have.length(1);
    agent = undefined;
  });
});
