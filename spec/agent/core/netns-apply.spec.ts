import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pino } from 'pino';
import { applyInterfaces } from '../../../agent/apply/interfaces.js';
import { findExecutable, runCommand } from '../../../agent/exec.js';
import { DEFAULT_COMMANDS } from '../../../agent/runtime.js';
import { validateDesiredState, type DesiredState } from '../../../domain/desired-state/schema.js';
import { startControl, type ControlInstance } from '../../support/agent-socket.js';
import { expectResponse } from '../../support/http.js';
import { freePort } from '../../support/ports.js';
import { eventually } from '../../support/wait.js';
import { desiredState, runAgent, startBird, tempDir, wireguardInterface, writeAgentConfig, type Bird } from '../support/core.js';
import { createNetns, supportsLinkKind, type NetNs } from '../support/netns.js';

const nodeBody = {
  node_id: 'fra1',
  asn: 4242420001,
  router_id: '172.20.0.1',
  loopback_ipv4: '172.20.0.1',
  loopback_ipv6: 'fd42:4242:1::1',
  link_local: 'fe80::1',
  ipv4_prefixes: ['172.20.0.0/27'],
};
/** A WireGuard interface record with an IP endpoint (`wg setconf` would resolve a host name first). */
const wgInterface = {
  spec: {
    name: 'dn42_a',
    kind: 'wireguard',
    listen_port: 51801,
    peer_link_local: 'fe80::2',
    peer: { public_key: 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=', endpoint: '192.0.2.10:51820' },
  },
};

type Summary = { generation: number; status: string; error: string | null; steps: { name: string; status: string; detail?: string | null }[] };
const stepsOf = (summary: Summary) => Object.fromEntries(summary.steps.map((s) => [s.name, s.status]));
const step = (summary: Summary, name: string) => summary.steps.find((s) => s.name === name)!;

/**
 * The apply's `ip` step for real: the agent's `command.ip` is `ip -n <ns>` and
 * its `command.wg` `ip netns exec <ns> wg`, so `--once --mode apply` changes
 * addresses and devices in a network namespace of its own (never the test
 * host's), against a real BIRD and a real control server. The machine has no
 * WireGuard module: what the kernel cannot do is checked to be reported and
 * rolled back, not hidden.
 */
describe('agent: --once --mode apply runs its ip commands in a network namespace', function () {
  this.timeout(120_000);
  let ns: NetNs;
  let control: ControlInstance;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let bird: Bird;
  let config: string;
  let settings: Record<string, string | number | boolean>;
  let decoy: ChildProcess | null = null;
  let enrollmentToken: string;

  before(async function () {
    const created = await createNetns();
    if ('unavailable' in created) {
      console.warn(`    skipped: ${created.unavailable}`);
      this.skip();
    }
    ns = created as NetNs;
  });
  after(async () => {
    await ns?.remove();
  });

  beforeEach(async () => {
    // A fresh namespace state per test: nothing left on lo, no devices.
    for (const a of await ns.addresses('lo'))
      if (a.local !== '127.0.0.1' && a.local !== '::1') await ns.ip('address', 'del', `${a.local}/${a.prefixlen}`, 'dev', 'lo');
    await ns.ip('link', 'del', 'dev', 'dn42_a');
    dir = await tempDir();
    control = await startControl();
    bird = await startBird(dir.path);
    settings = {
      bird_socket: bird.socket,
      bird_kernel: false,
      'command.ip': ns.ipArgv.join(' '),
      'command.wg': ns.wgArgv.join(' '),
      // Userspace WireGuard (`auto` without the module) runs in the namespace too.
      'command.wireguard_go': `ip netns exec ${ns.name} wireguard-go`,
      // No name server listens there: a DNS group's reload fails for real.
      'command.rndc': `rndc -s 127.0.0.1 -p ${await freePort()}`,
    };
    config = await writeAgentConfig(join(dir.path, 'agent.conf'), settings);
    expectResponse(await control.admin.post('/admin/nodes', nodeBody)).status(201);
    expectResponse(
      await control.admin.post('/admin/nodes/fra1/bgp-sessions', { spec: { name: 'peer_a', remote_asn: 4242420002, neighbor_address: '172.20.53.1' } }),
    ).status(201);
    enrollmentToken = (await control.admin.post('/admin/enrollment-tokens', { node_id: 'fra1' })).body.secret;
  });
  afterEach(async () => {
    if (decoy?.pid !== undefined && decoy.exitCode === null) decoy.kill('SIGTERM');
    decoy = null;
    await bird.stop();
    await control.close();
    await dir.remove();
  });

  const apply = async (): Promise<{ code: number | null; summary: Summary; stderr: string }> => {
    const run = await runAgent([
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
      join(dir.path, 'state'),
    ]);
    return { code: run.code, summary: JSON.parse(run.stdout), stderr: run.stderr };
  };
  const onLo = async () => (await ns.addresses('lo')).map((a) => `${a.local}/${a.prefixlen}`);
  const reported = async () => (await control.admin.get('/admin/nodes/fra1/health')).body.apply;

  it('puts the loopbacks on lo, replaces a changed one, and takes back a DNS bind address when the DNS reload fails', async () => {
    const first = await apply();
    expect(first.code, first.stderr).to.equal(0);
    expect(stepsOf(first.summary)).to.deep.include({ interfaces: 'ok', wireguard: 'skipped', bird: 'ok' });
    expect(step(first.summary, 'interfaces').detail).to.equal('2 ip commands');
    expect(await onLo()).to.include.members(['172.20.0.1/32', 'fd42:4242:1::1/128']);
    const host = await runCommand(['ip', '-j', 'address', 'show', 'dev', 'lo']);
    expect(host.stdout, 'the test host is untouched').not.to.contain('fd42:4242:1::1');

    expectResponse(await control.admin.patch('/admin/nodes/fra1', { loopback_ipv4: '172.20.0.2' })).status(200);
    const moved = await apply();
    expect(moved.code, moved.stderr).to.equal(0);
    expect(moved.summary).to.deep.include({ generation: 2, status: 'succeeded' });
    expect(step(moved.summary, 'interfaces').detail).to.equal('3 ip commands'); // one removal, two replaces
    const lo = await onLo();
    expect(lo).to.include.members(['172.20.0.2/32', 'fd42:4242:1::1/128']);
    expect(lo).not.to.include('172.20.0.1/32');

    const group = await control.admin.post('/admin/dns-groups', { name: 'anycast', bind_addresses: ['172.20.0.53'], forwards: [] });
    expectResponse(group).status(201);
    expectResponse(await control.admin.put('/admin/nodes/fra1/dns-group', { dns_group_id: group.body.id })).status(200);
    const failed = await apply();
    expect(failed.code).to.equal(1);
    expect(failed.summary).to.deep.include({ generation: 3, status: 'rolled_back' });
    expect(stepsOf(failed.summary)).to.deep.equal({
      write: 'ok',
      'bird-check': 'ok',
      interfaces: 'ok',
      wireguard: 'skipped',
      bird: 'ok',
      dns: 'failed',
      restore: 'ok',
    });
    expect(step(failed.summary, 'restore').detail).to.equal('previous files restored and re-applied');
    // The interfaces step had added the bind address; the restore removed it again.
    const after = await onLo();
    expect(after).to.include.members(['172.20.0.2/32', 'fd42:4242:1::1/128']);
    expect(after).not.to.include('172.20.0.53/32');
    expect(await reported()).to.deep.include({ generation: 3, status: 'rolled_back' });
  });

  it('reports a kernel without WireGuard (wireguard_implementation = kernel, ip link add fails) and rolls back to the previous state', async function () {
    if (await supportsLinkKind(ns, 'wireguard')) {
      console.warn('    skipped: this kernel has WireGuard, link add succeeds');
      this.skip();
    }
    config = await writeAgentConfig(join(dir.path, 'agent.conf'), { ...settings, wireguard_implementation: 'kernel' });
    expect((await apply()).code).to.equal(0);
    expectResponse(await control.admin.post('/admin/nodes/fra1/interfaces', wgInterface)).status(201);
    const { code, summary } = await apply();
    expect(code).to.equal(1);
    expect(summary).to.deep.include({ generation: 2, status: 'rolled_back' });
    expect(summary.error).to.match(
      new RegExp(
        `^interfaces: wireguard_implementation = kernel: kernel module missing or not allowed \\(ip -n ${ns.name} link add dev dn42wgprobe type wireguard exited \\d+: `,
      ),
    );
    expect(stepsOf(summary)).to.deep.equal({
      write: 'ok',
      'bird-check': 'ok',
      interfaces: 'failed',
      wireguard: 'skipped',
      bird: 'skipped',
      dns: 'skipped',
      restore: 'ok',
    });
    // The restore deletes nothing that is not there (dn42_a never came to be) and keeps the loopbacks.
    expect(step(summary, 'restore').detail).to.equal('previous files restored and re-applied');
    expect(await ns.hasDevice('dn42_a')).to.equal(false);
    expect(await onLo()).to.include.members(['172.20.0.1/32', 'fd42:4242:1::1/128']);
    const applyResult = await reported();
    expect(applyResult).to.deep.include({ generation: 2, status: 'rolled_back', error: summary.error });
  });

  it('reports a failed wg setconf (its listen port is taken) and removes what the apply added', async function () {
    if (!findExecutable('wireguard-go') && !(await supportsLinkKind(ns, 'wireguard'))) {
      console.warn('    skipped: neither kernel WireGuard nor wireguard-go here');
      this.skip();
    }
    expect((await apply()).code).to.equal(0);
    expectResponse(await control.admin.post('/admin/nodes/fra1/interfaces', wgInterface)).status(201);
    // Another WireGuard device of the namespace holds the interface's port: `wireguard-go` makes dn42_a, `wg setconf` fails.
    decoy = spawn('ip', ['netns', 'exec', ns.name, 'wireguard-go', '-f', 'dn42_z'], { stdio: 'ignore' });
    await eventually(async () => (await runCommand([...ns.wgArgv, 'set', 'dn42_z', 'listen-port', '51801'])).code === 0, {
      timeoutMs: 10_000,
      what: 'the decoy device on port 51801',
    });
    const { code, summary } = await apply();
    expect(code).to.equal(1);
    expect(summary).to.deep.include({ generation: 2, status: 'rolled_back' });
    expect(summary.error).to.match(
      new RegExp(`^wireguard: ip netns exec ${ns.name} wg setconf dn42_a \\S+/rendered/wireguard/dn42_a\\.conf exited 1: Unable to modify interface`),
    );
    expect(stepsOf(summary)).to.deep.equal({
      write: 'ok',
      'bird-check': 'ok',
      interfaces: 'ok',
      wireguard: 'failed',
      bird: 'skipped',
      dns: 'skipped',
      restore: 'ok',
    });
    // Loopbacks (2), MTU, the link-local address with its peer, up; the device itself is wireguard-go's (no module here).
    expect(step(summary, 'interfaces').detail).to.match(/^5 ip commands; WireGuard: (userspace|kernel)$/);
    // Generation 1 has no dn42_a: the restore deletes the device the failed apply configured.
    expect(await ns.hasDevice('dn42_a')).to.equal(false);
    expect(await onLo()).to.include.members(['172.20.0.1/32', 'fd42:4242:1::1/128']);
    expect(await reported()).to.deep.include({ generation: 2, status: 'rolled_back', error: summary.error });
  });

  it('moves a point-to-point address whose peer changed, and removes an address that left a kept device', async function () {
    // The interfaces step alone (in this process) on a bridge standing in for the WireGuard device.
    if ((await ns.ip('link', 'add', 'dev', 'dn42_a', 'type', 'bridge')).code !== 0) {
      console.warn('    skipped: no bridge device here');
      this.skip();
    }
    await ns.ip('link', 'set', 'dev', 'dn42_a', 'addrgenmode', 'none'); // no automatic link-local: WireGuard devices have none either
    const state = (addresses: object[]): DesiredState => {
      const doc = desiredState('fra1', { interfaces: [{ ...wireguardInterface('dn42_a', 51801), addresses }] });
      if (!validateDesiredState(doc).ok) throw new Error('invalid test state');
      return doc as unknown as DesiredState;
    };
    const target = { commands: { ...DEFAULT_COMMANDS, ip: ns.ipArgv }, renderedDir: dir.path, birdConfig: null, log: pino({ level: 'silent' }) };
    const held = async () => (await ns.addresses('dn42_a')).map((a) => `${a.local} peer ${a.address ?? '-'}/${a.prefixlen}`);
    const before = state([
      { address: 'fe80::1/64', peer: 'fe80::2/128' },
      { address: '172.20.0.33/32', peer: '172.20.0.34/32' },
    ]);
    expect(await applyInterfaces(target, before, null)).to.deep.include({ status: 'ok' });
    expect(await held()).to.have.members(['fe80::1 peer fe80::2/128', '172.20.0.33 peer 172.20.0.34/32']);

    const after = state([{ address: 'fe80::1/64', peer: 'fe80::3/128' }]);
    expect(await applyInterfaces(target, after, before)).to.deep.include({ status: 'ok' });
    expect(await held()).to.have.members(['fe80::1 peer fe80::3/128']);
    // Again with the same pair: the removals find nothing left to remove and are skipped, not failed.
    expect(await applyInterfaces(target, after, before)).to.deep.include({ status: 'ok', detail: '3 ip commands' });
  });
});
