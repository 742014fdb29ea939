import { expect } from 'chai';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startControl, type ControlInstance } from '../../support/agent-socket.js';
import { expectResponse } from '../../support/http.js';
import { eventually } from '../../support/wait.js';
import { runAgent, spawnAgent, startBird, tempDir, writeAgentConfig, type AgentProcess, type Bird } from '../support/core.js';

const BOOTSTRAP = 'token-refused-spec-bootstrap-enrollment-token-0123456789';
const session = (name: string, neighbor_address: string) => ({ spec: { name, remote_asn: 4242420002, neighbor_address } });

/**
 * A token the server no longer accepts (revoked, rotated): 401 on the pull,
 * close code 4401 on the socket. The agent takes a new token written into its
 * state dir, or re-enrolls with a configured enrollment token (here the
 * reusable bootstrap token), else says so loudly and keeps trying. The real
 * program against a real control server and a real BIRD.
 */
describe('agent: a refused agent token', function () {
  this.timeout(120_000);
  let c: ControlInstance;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let bird: Bird;
  let stateDir: string;
  let agent: AgentProcess | undefined;

  beforeEach(async () => {
    dir = await tempDir();
    stateDir = join(dir.path, 'state');
    c = await startControl(undefined, { BOOTSTRAP_ENROLLMENT_TOKEN: BOOTSTRAP });
    bird = await startBird(dir.path);
    expectResponse(await c.admin.post('/admin/nodes', { node_id: 'fra1', asn: 4242420001, router_id: '172.20.0.1', ipv4_prefixes: ['172.20.0.0/27'] })).status(
      201,
    );
    expectResponse(await c.admin.post('/admin/nodes/fra1/bgp-sessions', session('peer_a', '172.20.53.1'))).status(201);
    // Enrolled once with a one-time token (which also approves the node's registration).
    const oneTime = (await c.admin.post('/admin/enrollment-tokens', { node_id: 'fra1' })).body.secret;
    const first = await once(['--enrollment-token', oneTime, '--requested-node-id', 'fra1']);
    expect(first.code, first.stderr).to.equal(0);
  });
  afterEach(async () => {
    await agent?.stop('SIGKILL');
    agent = undefined;
    await bird.stop();
    await c.close();
    await dir.remove();
  });

  const config = (extra: Record<string, string> = {}) =>
    writeAgentConfig(join(dir.path, 'agent.conf'), {
      controller_url: c.url,
      state_dir: stateDir,
      bird_socket: bird.socket,
      bird_kernel: false,
      log_level: 'debug',
      ...extra,
    });
  async function once(extra: string[]) {
    return runAgent(['--once', '--config', await config(), ...extra]);
  }
  const storedToken = async () => (await readFile(join(stateDir, 'agent-token'), 'utf8')).trim();
  const tokenId = (token: string) => token.slice(0, token.indexOf('.'));
  const revoke = async (token: string) => expectResponse(await c.admin.delete(`/admin/agent-tokens/${tokenId(token)}`)).status(204);
  const applied = async () => (await c.admin.get('/admin/nodes/fra1/health')).body.applied_generation;
  const logged = (msg: string) => agent!.logs().filter((l) => l.msg === msg);

  it('--once: without an enrollment token the run fails with the refusal; with one it re-enrolls and applies', async () => {
    const old = await storedToken();
    await revoke(old);
    const refused = await once([]);
    expect(refused.code).to.equal(1);
    expect(JSON.parse(refused.stdout)).to.deep.include({ status: 'failed', error: 'agent token refused: 401 invalid or expired agent token' });
    expect(refused.stderr).to.contain('no enrollment token configured');

    const renewed = await once(['--enrollment-token', BOOTSTRAP]);
    expect(renewed.code, renewed.stderr).to.equal(0);
    expect(JSON.parse(renewed.stdout)).to.deep.include({ node_id: 'fra1', generation: 1, status: 'succeeded' });
    expect(await storedToken()).not.to.equal(old);
  });

  it('daemon: re-enrolls with the configured bootstrap token when its token is revoked, then follows doorbells again', async () => {
    agent = spawnAgent(['--config', await config({ enrollment_token: BOOTSTRAP })]);
    await eventually(() => c.sockets.hub.connectionCount('fra1') === 1, 20_000, 'the agent channel');
    const old = await storedToken();
    await revoke(old);
    await eventually(() => logged('agent token refused; re-enrolled with the configured enrollment token').length === 1, 20_000, 're-enrolment');
    const renewed = await storedToken();
    expect(renewed).not.to.equal(old);
    await eventually(() => c.sockets.hub.connectionCount('fra1') === 1, 20_000, 'the channel with the new token');

    expectResponse(await c.admin.post('/admin/nodes/fra1/bgp-sessions', session('peer_b', '172.20.53.2'))).status(201);
    await eventually(async () => (await applied()) === 2, 20_000, 'generation 2 applied with the new token');
    expect(logged('agent token refused; re-enrolled with the configured enrollment token')).to.have.length(1);
  });

  it('daemon: without an enrollment token it logs the refusal as an error, stays up, and takes a rotated token written into the state dir', async () => {
    agent = spawnAgent(['--config', await config()]);
    await eventually(() => c.sockets.hub.connectionCount('fra1') === 1, 20_000, 'the agent channel');
    const old = await storedToken();
    const rotated = await c.admin.post(`/admin/agent-tokens/${tokenId(old)}/rotate`, {});
    expectResponse(rotated).status(201);
    const refusal = /^agent token refused \(revoked, rotated or expired\) and no enrollment token configured/;
    // Each 4401 close logs the refusal, then the reconnect delay (two lines, which may reach this process in two reads): wait for the later one.
    const refusedCloses = () => logged('agent channel closed; reconnecting').filter((l) => l.code === 4401);
    await eventually(() => refusedCloses().length >= 2, 20_000, 'two sockets closed with 4401');
    expect(
      agent.logs().filter((l) => refusal.test(l.msg) && l.level === 50),
      'the refusal logged as an error, twice',
    ).to.have.length.of.at.least(2);
    expect(agent.child.exitCode).to.equal(null);
    expect(c.sockets.hub.connectionCount('fra1')).to.equal(0);
    // The server accepts the handshake and closes with 4401 at once: that is no connection, the delay keeps growing.
    const delays = refusedCloses().map((l) => l.retry_in_ms as number);
    expect(delays[0]).to.be.within(1000, 1250);
    expect(delays[1]).to.be.within(2000, 2500);

    await writeFile(join(stateDir, 'agent-token'), `${rotated.body.token}\n`, { mode: 0o600 });
    await eventually(() => logged('agent token refused; using the new token found in the state dir').length === 1, 30_000, 'the rotated token taken');
    await eventually(() => c.sockets.hub.connectionCount('fra1') === 1, 20_000, 'the channel with the rotated token');
    expectResponse(await c.admin.post('/admin/nodes/fra1/bgp-sessions', session('peer_b', '172.20.53.2'))).status(201);
    await eventually(async () => (await applied()) === 2, 20_000, 'generation 2 applied with the rotated token');
    expect(await agent.stop('SIGTERM')).to.equal(0);
    agent = undefined;
  });
});
