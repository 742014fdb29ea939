import { expect } from 'chai';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bgpProtocolName, wireguardPublicKey } from '../../../agent/render/index.js';
import { startControl, type ControlInstance } from '../../support/agent-socket.js';
import { expectResponse } from '../../support/http.js';
import { freePort } from '../../support/ports.js';
import { runAgent, startBird, tempDir, writeAgentConfig, type Bird } from '../support/core.js';

/** A node without loopbacks: its apply runs no `ip` command on the test host. */
const nodeBody = { node_id: 'fra1', asn: 4242420001, router_id: '172.20.0.1', ipv4_prefixes: ['172.20.0.0/27'] };
/** The line of `birdc show protocols` of a session's BGP protocol. */
const listed = (name: string) => new RegExp(`^${bgpProtocolName({ name })}\\s+BGP`, 'm');
const session = (name: string, neighbor_address: string) => ({ spec: { name, remote_asn: 4242420002, neighbor_address } });

/**
 * `--once --mode apply` against a real BIRD 2 daemon (own control socket, no
 * kernel protocol) and a real control server. The desired states carry BGP
 * sessions to IPv4 neighbours and no WireGuard interface or loopback, so the
 * `ip`/`wg` steps are skipped here: they need root and kernel WireGuard
 * support (docs/decisions.md, "Agent").
 */
describe('agent: --once --mode apply against a real BIRD and control server', function () {
  this.timeout(120_000);
  let control: ControlInstance;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let bird: Bird;
  let config: string;
  let stateDir: string;
  let enrollmentToken: string;

  beforeEach(async () => {
    dir = await tempDir();
    stateDir = join(dir.path, 'state');
    control = await startControl();
    bird = await startBird(dir.path);
    // rndc is pointed at a port where no named listens: a node with DNS then fails its DNS step for real.
    config = await writeAgentConfig(join(dir.path, 'agent.conf'), {
      bird_socket: bird.socket,
      bird_kernel: false,
      'command.rndc': `rndc -s 127.0.0.1 -p ${await freePort()}`,
    });
    expectResponse(await control.admin.post('/admin/nodes', nodeBody)).status(201);
    expectResponse(await control.admin.post('/admin/nodes/fra1/bgp-sessions', session('peer_a', '172.20.53.1'))).status(201);
    const token = await control.admin.post('/admin/enrollment-tokens', { node_id: 'fra1' });
    expectResponse(token).status(201);
    enrollmentToken = token.body.secret;
  });
  afterEach(async () => {
    await bird.stop();
    await control.close();
    await dir.remove();
  });

  const apply = () =>
    runAgent([
      '--once',
      '--mode',
      'apply',
      '--config',
      config,
      '--controller-url',
      control.url,
      '--enrollment-token',
      enrollmentToken,
      '--requested-node-id',
      'fra1',
      '--state-dir',
      stateDir,
    ]);
  const health = async () => (await control.admin.get('/admin/nodes/fra1/health')).body;
  const protocols = () => bird.birdc('show', 'protocols');
  const renderedEbgp = () => readFile(join(stateDir, 'nodes/fra1/rendered/bird/ebgp.conf'), 'utf8');
  const stepsOf = (summary: { steps: { name: string; status: string }[] }) => Object.fromEntries(summary.steps.map((s) => [s.name, s.status]));

  it('enrolls, registers its WireGuard key, applies generation 1 (birdc configure accepted) and reports the apply result', async () => {
    const run = await apply();
    expect(run.code, run.stderr).to.equal(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).to.deep.include({ node_id: 'fra1', mode: 'apply', generation: 1, status: 'succeeded', error: null });
    expect(stepsOf(summary)).to.deep.equal({ write: 'ok', 'bird-check': 'ok', interfaces: 'skipped', wireguard: 'skipped', bird: 'ok', dns: 'skipped' });
    expect(summary.steps.find((s: { name: string }) => s.name === 'bird').detail).to.equal('Reconfigured');

    expect(await protocols()).to.match(listed('peer_a'));
    const h = await health();
    expect(h).to.deep.include({ last_apply_status: 'succeeded', last_report_status: 'in_sync' });
    expect(h.apply).to.deep.include({ node_id: 'fra1', generation: 1, status: 'succeeded', error: null });
    expect(h.apply.steps.map((s: { name: string }) => s.name)).to.deep.equal(['write', 'bird-check', 'interfaces', 'wireguard', 'bird', 'dns']);

    const key = (await readFile(join(stateDir, 'nodes/fra1/wireguard-private.key'), 'utf8')).trim();
    expect((await control.admin.get('/admin/nodes/fra1')).body.wireguard_public_key).to.equal(wireguardPublicKey(key));
    const applied = JSON.parse(await readFile(join(stateDir, 'nodes/fra1/applied.json'), 'utf8'));
    expect(applied).to.deep.include({ generation: 1, status: 'ok' });
    expect(await readFile(join(stateDir, 'nodes/fra1/last-good/bird/ebgp.conf'), 'utf8')).to.equal(await renderedEbgp());
  });

  it('reports files changed on the node as drift of the generation in force and puts them back', async () => {
    expect((await apply()).code).to.equal(0);
    const good = await renderedEbgp();
    await writeFile(join(stateDir, 'nodes/fra1/rendered/bird/ebgp.conf'), '# edited on the node\n');
    await rm(join(stateDir, 'nodes/fra1/rendered/bird/internal.conf'));
    const run = await apply();
    expect(run.code, run.stderr).to.equal(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).to.deep.include({ generation: 1, status: 'succeeded' });
    expect(summary.drift).to.deep.equal([
      { kind: 'file', name: 'bird/internal.conf', detail: 'missing on the node' },
      { kind: 'file', name: 'bird/ebgp.conf', detail: 'content or mode differs from the desired state' },
    ]);
    expect(await renderedEbgp()).to.equal(good);
    expect((await health()).last_report_status).to.equal('drift');
    const [report] = (await control.admin.get('/admin/nodes/fra1/status-events?kind=report&limit=1')).body.events;
    expect(report).to.deep.include({ generation: 1, status: 'drift', drift_count: 2 });
  });

  it('keeps the previous files in force when BIRD cannot take the new ones: rolled back, reported, applied later', async () => {
    expect((await apply()).code).to.equal(0);
    const generation1 = await renderedEbgp();
    expectResponse(await control.admin.post('/admin/nodes/fra1/bgp-sessions', session('peer_b', '172.20.53.2'))).status(201);
    await bird.stop();

    const failed = await apply();
    expect(failed.code).to.equal(1);
    const summary = JSON.parse(failed.stdout);
    expect(summary).to.deep.include({ generation: 2, status: 'rolled_back' });
    expect(summary.error).to.match(/^bird-check: birdc -s .* configure check .* exited 1: Unable to connect to server control socket/);
    expect(stepsOf(summary)).to.deep.equal({
      write: 'ok',
      'bird-check': 'failed',
      interfaces: 'skipped',
      wireguard: 'skipped',
      bird: 'skipped',
      dns: 'skipped',
      restore: 'ok',
    });
    expect(await renderedEbgp()).to.equal(generation1);
    expect((await health()).apply).to.deep.include({ generation: 2, status: 'rolled_back' });
    expect(JSON.parse(await readFile(join(stateDir, 'nodes/fra1/applied.json'), 'utf8'))).to.deep.include({ generation: 1, status: 'failed' });

    bird = await startBird(dir.path);
    const again = await apply();
    expect(again.code, again.stderr).to.equal(0);
    expect(JSON.parse(again.stdout)).to.deep.include({ generation: 2, status: 'succeeded' });
    expect(await protocols())
      .to.match(listed('peer_a'))
      .and.to.match(listed('peer_b'));
  });

  it('returns BIRD to the previous configuration when a later step fails (DNS reload without a name server)', async () => {
    expect((await apply()).code).to.equal(0);
    expectResponse(await control.admin.post('/admin/nodes/fra1/bgp-sessions', session('peer_b', '172.20.53.2'))).status(201);
    const group = await control.admin.post('/admin/dns-groups', { name: 'anycast', bind_addresses: [], forwards: [] });
    expectResponse(group).status(201);
    expectResponse(await control.admin.put('/admin/nodes/fra1/dns-group', { dns_group_id: group.body.id })).status(200);

    const run = await apply();
    expect(run.code).to.equal(1);
    const summary = JSON.parse(run.stdout);
    expect(summary).to.deep.include({ generation: 3, status: 'rolled_back' });
    expect(stepsOf(summary)).to.deep.equal({
      write: 'ok',
      'bird-check': 'ok',
      interfaces: 'skipped',
      wireguard: 'skipped',
      bird: 'ok',
      dns: 'failed',
      restore: 'ok',
    });
    expect(summary.steps.find((s: { name: string }) => s.name === 'restore').detail).to.equal('previous files restored and re-applied');
    // BIRD had loaded generation 3 (peer_b) and was configured back to generation 1.
    const after = await protocols();
    expect(after).to.match(listed('peer_a'));
    expect(after).not.to.match(listed('peer_b'));
    expect((await health()).apply).to.deep.include({ generation: 3, status: 'rolled_back' });
  });
});
