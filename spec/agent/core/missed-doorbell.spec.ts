import { expect } from 'chai';
import { join } from 'node:path';
import type { DoorbellEvent } from '../../../domain/doorbell.js';
import { bgpProtocolName } from '../../../agent/render/index.js';
import { ADMIN_TOKEN } from '../../support/agent-socket.js';
import { api, expectResponse } from '../../support/http.js';
import { freePort } from '../../support/ports.js';
import { createTestSystem, type TestSystem } from '../../support/system.js';
import { listenControl, type ListeningControl } from '../support/control.js';
import { spawnAgent, startBird, tempDir, writeAgentConfig, type AgentProcess, type Bird } from '../support/core.js';
import { eventually } from '../../support/wait.js';

const listed = (name: string) => new RegExp(`^${bgpProtocolName({ name })}\\s+BGP`, 'm');
const session = (name: string, neighbor_address: string) => ({ spec: { name, remote_asn: 4242420002, neighbor_address } });

/**
 * Doorbells can be lost: a full event queue drops them (contract, "Events"),
 * and none reach an agent whose socket is down. The daemon catches up through
 * the generation in the `hello` of its next connection and through its
 * periodic safety reconcile. The real program against a real control server
 * and a real BIRD; the logs say which trigger brought the generation.
 */
describe('agent: daemon catches up on doorbells it never got', function () {
  this.timeout(120_000);
  let sys: TestSystem;
  let server: ListeningControl | undefined;
  let other: ListeningControl | undefined;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let bird: Bird;
  let agent: AgentProcess | undefined;
  let port: number;
  let admin: ReturnType<typeof api>;

  beforeEach(async () => {
    dir = await tempDir();
    sys = await createTestSystem({ env: { ADMIN_TOKEN } });
    bird = await startBird(dir.path);
    port = await freePort();
    server = await listenControl(sys, port);
    admin = api(`http://127.0.0.1:${port}/control/v1`, { token: ADMIN_TOKEN });
    expectResponse(await admin.post('/admin/nodes', { node_id: 'fra1', asn: 4242420001, router_id: '172.20.0.1', ipv4_prefixes: ['172.20.0.0/27'] })).status(
      201,
    );
    expectResponse(await admin.post('/admin/nodes/fra1/bgp-sessions', session('peer_a', '172.20.53.1'))).status(201);
  });
  afterEach(async () => {
    await agent?.stop('SIGKILL');
    agent = undefined;
    await other?.close();
    other = undefined;
    await server?.close();
    await bird.stop();
    await sys.close();
    await dir.remove();
  });

  /** Starts the daemon and waits until generation 1 is applied and its channel is open. */
  async function startAgent(extra: Record<string, string | number> = {}): Promise<AgentProcess> {
    const enrollment = await admin.post('/admin/enrollment-tokens', { node_id: 'fra1' });
    const config = await writeAgentConfig(join(dir.path, 'agent.conf'), {
      controller_url: `http://127.0.0.1:${port}`,
      enrollment_token: enrollment.body.secret,
      requested_node_id: 'fra1',
      state_dir: join(dir.path, 'state'),
      bird_socket: bird.socket,
      bird_kernel: false,
      log_level: 'debug',
      ...extra,
    });
    const started = spawnAgent(['--config', config]);
    await eventually(async () => (await admin.get('/admin/nodes/fra1/health')).body.applied_generation === 1, 30_000, 'generation 1 applied');
    await eventually(() => server!.sockets.hub.connectionCount('fra1') === 1, 15_000, 'the agent channel');
    return started;
  }
  const appliedGeneration = async () => (await admin.get('/admin/nodes/fra1/health')).body.applied_generation as number | null;
  const reconciled = (a: AgentProcess) => a.logs().filter((l) => l.msg === 'reconciled') as unknown as { reason: string; generation: number; status: string }[];

  it('applies a generation whose doorbell was dropped at the next periodic reconcile, the socket staying up', async () => {
    agent = await startAgent({ reconcile_interval_seconds: 2 });
    // The queue is full: every desired_state_updated is dropped before it reaches the socket.
    const dropped: DoorbellEvent[] = [];
    const live = sys.doorbell.currentBroadcaster();
    sys.doorbell.setBroadcaster({
      deliver: (event) => {
        if (event.type !== 'desired_state_updated') return live.deliver(event);
        dropped.push(event);
        return { node_id: event.node_id, subscribers: 1, delivered: 0 };
      },
    });
    try {
      expectResponse(await admin.post('/admin/nodes/fra1/bgp-sessions', session('peer_b', '172.20.53.2'))).status(201);
      expect(dropped.map((e) => e.type === 'desired_state_updated' && e.generation)).to.deep.equal([2]);
      await eventually(async () => (await appliedGeneration()) === 2, 15_000, 'generation 2 applied without its doorbell');
    } finally {
      sys.doorbell.setBroadcaster(live);
    }
    expect(
      reconciled(agent)
        .filter((l) => l.generation === 2 && l.status === 'succeeded')
        .map((l) => l.reason),
    ).to.deep.equal(['periodic']);
    expect(
      agent.logs().filter((l) => l.msg === 'agent channel closed; reconnecting'),
      'the socket stayed open',
    ).to.have.length(0);
    expect(await bird.birdc('show', 'protocols')).to.match(listed('peer_b'));
  });

  it('applies a generation published while its server was away when the hello names it, and exits 0 on SIGINT', async () => {
    agent = await startAgent(); // safety reconcile every 300 s: only the hello can bring generation 2 in time
    await server!.close();
    server = undefined;
    await eventually(() => agent!.logs().some((l) => l.msg === 'agent channel closed; reconnecting'), 10_000, 'the channel lost');
    // An administrator writes through another instance; nobody is subscribed, the doorbell goes nowhere.
    const otherPort = await freePort();
    other = await listenControl(sys, otherPort);
    const otherAdmin = api(`http://127.0.0.1:${otherPort}/control/v1`, { token: ADMIN_TOKEN });
    expectResponse(await otherAdmin.post('/admin/nodes/fra1/bgp-sessions', session('peer_b', '172.20.53.2'))).status(201);
    expect((await otherAdmin.get('/admin/nodes/fra1')).body.current_generation).to.equal(2);

    server = await listenControl(sys, port);
    await eventually(async () => (await appliedGeneration()) === 2, 30_000, 'generation 2 applied after the reconnect');
    expect(
      reconciled(agent)
        .filter((l) => l.generation === 2 && l.status === 'succeeded')
        .map((l) => l.reason),
    ).to.deep.equal(['hello']);
    expect(await bird.birdc('show', 'protocols')).to.match(listed('peer_b'));

    expect(await agent.stop('SIGINT')).to.equal(0);
    expect(agent.logs().filter((l) => l.msg === 'daemon stopped')).to.have.length(1);
    agent = undefined;
  });
});
