import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { findExecutable, runCommand } from '../../../agent/exec.js';
import { generateWireguardPrivateKey, wireguardPublicKey } from '../../../agent/render/index.js';
import { WireguardGoSupervisor } from '../../../agent/wireguard/supervisor.js';
import { startControl, type ControlInstance } from '../../support/agent-socket.js';
import { expectResponse } from '../../support/http.js';
import { eventually } from '../../support/wait.js';
import { runAgent, startBird, tempDir, writeAgentConfig, type Bird } from '../support/core.js';
import { createNetns, supportsLinkKind, type NetNs } from '../support/netns.js';

const SOCKET_DIR = '/var/run/wireguard';
const silent = pino({ level: 'silent' });

/** The process's state letter and start time, or null when it is gone (a zombie counts as gone). */
async function alive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]);
  } catch {
    return false;
  }
}

/** A device name of this run only (UAPI sockets live in one host-wide directory). */
const deviceName = () => `dn42u${randomBytes(3).toString('hex')}`;

/**
 * Userspace WireGuard for real: `wireguard-go` in network namespaces made by
 * the spec, run by the agent's supervisor (`command.wireguard_go` = `ip netns
 * exec <ns> wireguard-go`, which execs, so the child is `wireguard-go`). Two
 * namespaces on a veth pair ping each other over the tunnel; a killed process
 * is restarted with its socket cleaned, a second supervisor (an agent restart)
 * adopts the running one without a new process, and stop ends it.
 */
describe('agent: wireguard-go supervised per interface', function () {
  this.timeout(60_000);
  let a: NetNs;
  let b: NetNs;
  const supervisors: WireguardGoSupervisor[] = [];
  let dir: Awaited<ReturnType<typeof tempDir>>;
  const devA = deviceName();
  const devB = deviceName();

  before(async function () {
    if (!findExecutable('wireguard-go')) {
      console.warn('    skipped: wireguard-go is not installed (apt-get install wireguard-go)');
      this.skip();
    }
    const first = await createNetns();
    if ('unavailable' in first) {
      console.warn(`    skipped: ${first.unavailable}`);
      this.skip();
    }
    a = first as NetNs;
    b = (await createNetns()) as NetNs;
    const veth = `v${randomBytes(3).toString('hex')}`;
    await a.ip('link', 'add', 'dev', `${veth}a`, 'type', 'veth', 'peer', 'name', `${veth}b`, 'netns', b.name);
    await a.ip('address', 'add', '198.18.0.1/24', 'dev', `${veth}a`);
    await b.ip('address', 'add', '198.18.0.2/24', 'dev', `${veth}b`);
    await a.ip('link', 'set', 'dev', `${veth}a`, 'up');
    await b.ip('link', 'set', 'dev', `${veth}b`, 'up');
    dir = await tempDir('dn42-wg-userspace-');
  });
  after(async () => {
    for (const s of supervisors) s.close();
    for (const [s, dev] of [
      [supervisorFor(a, 'a-cleanup'), devA],
      [supervisorFor(b, 'b-cleanup'), devB],
    ] as const)
      await s?.stop(dev).catch(() => {});
    await a?.remove();
    await b?.remove();
    await dir?.remove();
  });

  const restarted: string[] = [];
  function supervisorFor(ns: NetNs | undefined, name: string): WireguardGoSupervisor | null {
    if (!ns || !dir) return null;
    const s = new WireguardGoSupervisor({
      command: ['ip', 'netns', 'exec', ns.name, 'wireguard-go'],
      socketDir: SOCKET_DIR,
      // One state dir per namespace: a second supervisor of the same "agent" finds the pid files.
      stateDir: join(dir.path, ns === a ? 'a' : 'b'),
      ip: ns.ipArgv,
      log: silent,
      backoff: { initialMs: 200, maxMs: 1000, jitter: 0 },
      onRestarted: (iface) => restarted.push(`${name}:${iface}`),
    });
    supervisors.push(s);
    return s;
  }

  const keys = { a: generateWireguardPrivateKey(), b: generateWireguardPrivateKey() };
  /** What the apply would do after `ensure`: keys, peer, link-local addresses, up (`wg set` through the UAPI socket). */
  async function configure(ns: NetNs, dev: string, own: string, peer: string, port: number, peerEndpoint: string, local: string, remote: string) {
    const keyFile = join(dir.path, `${dev}.key`);
    await import('node:fs/promises').then((fs) => fs.writeFile(keyFile, own, { mode: 0o600 }));
    const wg = await runCommand([
      ...ns.wgArgv,
      'set',
      dev,
      'listen-port',
      String(port),
      'private-key',
      keyFile,
      'peer',
      wireguardPublicKey(peer),
      'endpoint',
      peerEndpoint,
      'allowed-ips',
      'fe80::/64',
    ]);
    expect(wg.code, wg.stderr).to.equal(0);
    await ns.ip('address', 'replace', `${local}/64`, 'peer', `${remote}/128`, 'dev', dev);
    await ns.ip('link', 'set', 'dev', dev, 'up');
  }
  const ping = (ns: NetNs, target: string, dev: string) => runCommand(['ip', 'netns', 'exec', ns.name, 'ping', '-c', '1', '-W', '1', `${target}%${dev}`]);

  it('brings a tunnel up between two namespaces, restarts a killed wireguard-go, and a second supervisor adopts it', async () => {
    const sa = supervisorFor(a, 'a')!;
    const sb = supervisorFor(b, 'b')!;
    expect(await sa.ensure(devA)).to.deep.equal({ ok: true, started: true });
    expect(await sb.ensure(devB)).to.deep.equal({ ok: true, started: true });
    expect(await a.hasDevice(devA)).to.equal(true);
    await configure(a, devA, keys.a, keys.b, 51901, '198.18.0.2:51902', 'fe80::1', 'fe80::2');
    await configure(b, devB, keys.b, keys.a, 51902, '198.18.0.1:51901', 'fe80::2', 'fe80::1');
    await eventually(async () => (await ping(a, 'fe80::2', devA)).code === 0, { timeoutMs: 15_000, what: 'a ping over the userspace tunnel' });

    // A second ensure keeps the process: no restart, no new pid.
    const pid = sa.report(devA)!.pid!;
    expect(await sa.ensure(devA)).to.deep.equal({ ok: true, started: false });
    expect(sa.report(devA)!.pid).to.equal(pid);

    // kill -9: the device goes, the socket stays behind; the supervisor restarts it and says so.
    process.kill(pid, 'SIGKILL');
    await eventually(() => restarted.includes(`a:${devA}`), { timeoutMs: 15_000, what: 'the restart of the killed wireguard-go' });
    const after = sa.report(devA)!;
    expect(after).to.deep.include({ restarts: 1, last_exit: 'killed by SIGKILL' });
    expect(after.pid).to.be.a('number').and.not.equal(pid);
    expect(await alive(after.pid!)).to.equal(true);
    expect(await a.hasDevice(devA)).to.equal(true);
    // The new device is bare until the apply configures it again (the daemon does: reapplyDevice).
    await configure(a, devA, keys.a, keys.b, 51901, '198.18.0.2:51902', 'fe80::1', 'fe80::2');
    await eventually(async () => (await ping(a, 'fe80::2', devA)).code === 0, { timeoutMs: 15_000, what: 'a ping after the restart' });

    // An agent restart: the old supervisor lets go, a new one adopts the same process.
    sa.close();
    const again = supervisorFor(a, 'a2')!;
    expect(await again.adopt(devA)).to.equal(true);
    expect(await again.ensure(devA)).to.deep.equal({ ok: true, started: false });
    expect(again.report(devA)!.pid).to.equal(after.pid);
    expect((await ping(a, 'fe80::2', devA)).code, 'the tunnel was not torn down').to.equal(0);

    // The adopted process is watched too: killed, it is restarted by the new supervisor.
    process.kill(after.pid!, 'SIGKILL');
    await eventually(() => restarted.includes(`a2:${devA}`), { timeoutMs: 15_000, what: 'the restart of the adopted process' });
    expect(again.report(devA)!.last_exit).to.match(/^ended/);

    // Leaving the desired state: the process ends, the device and the socket go.
    const last = again.report(devA)!.pid!;
    await again.stop(devA);
    expect(await alive(last)).to.equal(false);
    expect(await a.hasDevice(devA)).to.equal(false);
    expect(existsSync(join(SOCKET_DIR, `${devA}.sock`))).to.equal(false);
    expect(again.report(devA)).to.equal(null);
  });

  it('removes a stale UAPI socket a killed process left before it starts a new one', async () => {
    const dev = deviceName();
    const first = supervisorFor(b, 'stale')!;
    expect(await first.ensure(dev)).to.deep.include({ ok: true });
    const pid = first.report(dev)!.pid!;
    first.close(); // nobody watches: the kill below is not seen
    process.kill(pid, 'SIGKILL');
    await eventually(async () => !(await alive(pid)), { timeoutMs: 5000, what: 'the killed process to be gone' });
    expect(existsSync(join(SOCKET_DIR, `${dev}.sock`)), 'the kill leaves the socket').to.equal(true);
    const next = supervisorFor(b, 'stale2')!;
    expect(await next.adopt(dev), 'a dead process is not adopted').to.equal(false);
    expect(await next.ensure(dev)).to.deep.equal({ ok: true, started: true });
    const wg = await runCommand([...b.wgArgv, 'show', dev]);
    expect(wg.code, wg.stderr).to.equal(0);
    await next.stop(dev);
    expect(existsSync(join(SOCKET_DIR, `${dev}.sock`))).to.equal(false);
  });
});

/**
 * The apply with each setting, through `--once --mode apply` against a real
 * control server and BIRD: `userspace` makes the tunnel with `wireguard-go`
 * and the registration names it; `kernel` on a kernel without the module is a
 * failed step that says why, never swallowed.
 */
describe('agent: --once applies a WireGuard interface with the implementation it is set to', function () {
  this.timeout(120_000);
  let ns: NetNs;
  let control: ControlInstance;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let bird: Bird;
  const dev = deviceName();

  before(async function () {
    if (!findExecutable('wireguard-go')) {
      console.warn('    skipped: wireguard-go is not installed (apt-get install wireguard-go)');
      this.skip();
    }
    const created = await createNetns();
    if ('unavailable' in created) {
      console.warn(`    skipped: ${created.unavailable}`);
      this.skip();
    }
    ns = created as NetNs;
    dir = await tempDir('dn42-wg-apply-');
    control = await startControl();
    bird = await startBird(dir.path);
    expectResponse(
      await control.admin.post('/admin/nodes', {
        node_id: 'fra1',
        asn: 4242420001,
        router_id: '172.20.0.1',
        link_local: 'fe80::1',
        ipv4_prefixes: ['172.20.0.0/27'],
      }),
    ).status(201);
    expectResponse(
      await control.admin.post('/admin/nodes/fra1/interfaces', {
        spec: {
          name: dev,
          kind: 'wireguard',
          listen_port: 51811,
          peer_link_local: 'fe80::2',
          peer: { public_key: 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=', endpoint: '198.18.0.2:51820' },
        },
      }),
    ).status(201);
  });
  after(async () => {
    // The userspace process outlives the agent on purpose: stopped here by its pid file.
    const pidFile = dir && join(dir.path, 'state-userspace', 'wireguard-go', `${dev}.json`);
    if (pidFile && existsSync(pidFile)) {
      const { pid } = JSON.parse(await readFile(pidFile, 'utf8')) as { pid: number };
      if (Number.isSafeInteger(pid) && pid > 0 && (await alive(pid))) process.kill(pid, 'SIGTERM');
    }
    await bird?.stop();
    await control?.close();
    await ns?.remove();
    await dir?.remove();
  });

  const apply = async (implementation: string, state: string) => {
    const token = (await control.admin.post('/admin/enrollment-tokens', { node_id: 'fra1' })).body.secret;
    const config = await writeAgentConfig(join(dir.path, `${state}.conf`), {
      bird_socket: bird.socket,
      bird_kernel: false,
      'command.ip': ns.ipArgv.join(' '),
      'command.wg': ns.wgArgv.join(' '),
      'command.wireguard_go': `ip netns exec ${ns.name} wireguard-go`,
      wireguard_implementation: implementation,
    });
    const run = await runAgent([
      '--once',
      '--config',
      config,
      '--controller-url',
      control.url,
      '--enrollment-token',
      token,
      '--requested-node-id',
      'fra1',
      '--state-dir',
      join(dir.path, state),
    ]);
    return { code: run.code, summary: JSON.parse(run.stdout), stderr: run.stderr };
  };

  it('kernel without the module: the interfaces step fails with the reason and nothing is made', async function () {
    if (await supportsLinkKind(ns, 'wireguard')) {
      console.warn('    skipped: this kernel has WireGuard; the missing-module case cannot happen here');
      this.skip();
    }
    const { code, summary } = await apply('kernel', 'state-kernel');
    expect(code).to.equal(1);
    const step = summary.steps.find((s: { name: string }) => s.name === 'interfaces');
    expect(step.status).to.equal('failed');
    expect(step.detail).to.match(
      /^wireguard_implementation = kernel: kernel module missing or not allowed \(ip -n \S+ link add dev dn42wgprobe type wireguard exited 2: /,
    );
    expect(await ns.hasDevice(dev)).to.equal(false);
  });

  it('userspace: wireguard-go makes the device, wg setconf configures it, and the registration says userspace', async () => {
    const { code, summary, stderr } = await apply('userspace', 'state-userspace');
    expect(code, stderr).to.equal(0);
    expect(summary.status).to.equal('succeeded');
    const steps = Object.fromEntries(summary.steps.map((s: { name: string; detail: string }) => [s.name, s.detail]));
    expect(steps.interfaces).to.match(/; WireGuard: userspace$/);
    const shown = await runCommand([...ns.wgArgv, 'show', dev, 'listen-port']);
    expect(shown.stdout.trim(), shown.stderr).to.equal('51811');
    const addresses = (await ns.addresses(dev)).map((x) => x.local);
    expect(addresses).to.include('fe80::1');
    // The process outlives the one-shot agent: the next agent adopts it.
    const { pid } = JSON.parse(await readFile(join(dir.path, 'state-userspace', 'wireguard-go', `${dev}.json`), 'utf8'));
    expect(await alive(pid)).to.equal(true);
    const fleet = await control.admin.get('/public/fleet');
    const node = fleet.body.nodes.find((n: { node_id: string }) => n.node_id === 'fra1');
    expect(node.capabilities).to.include.members(['wireguard', 'wireguard-userspace']);
  });
});
