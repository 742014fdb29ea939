import { expect } from 'chai';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { parseCommandLine, type AgentSettings } from '../../../agent/cli.js';
import { runDoctor } from '../../../agent/doctor.js';
import { writeEnrollment } from '../../../agent/state/enrollment.js';
import { stateLayout } from '../../../agent/state/layout.js';
import { ADMIN_TOKEN, startControl, type ControlInstance } from '../../support/agent-socket.js';
import { issueAgentToken } from '../../support/agents.js';
import { expectResponse } from '../../support/http.js';
import { freePort } from '../../support/ports.js';
import { runAgent, tempDir, writeAgentConfig } from '../support/core.js';

describe('agent: --doctor', function () {
  this.timeout(60_000);
  let c: ControlInstance;
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let stateDir: string;
  let token: string;

  before(async () => {
    c = await startControl();
    expectResponse(await c.admin.post('/admin/nodes', { node_id: 'fra1', asn: 4242420001, router_id: '172.20.0.1' })).status(201);
  });
  after(() => c.close());
  beforeEach(async () => {
    dir = await tempDir();
    stateDir = join(dir.path, 'state');
    await mkdir(stateDir);
    await chmod(stateDir, 0o711);
    token = (await issueAgentToken(c.url, ADMIN_TOKEN, 'fra1')).token;
    await writeEnrollment(stateLayout(stateDir), { node_id: 'fra1', agent_id: null, token });
  });
  afterEach(() => dir.remove());

  /** The doctor in this process: exit code and its lines. */
  async function doctor(...extra: string[]): Promise<{ code: number; lines: string[] }> {
    const settings = parseCommandLine(['--doctor', '--state-dir', stateDir, ...extra], '1.0.0') as AgentSettings;
    let text = '';
    const code = await runDoctor(settings, (line) => (text += line));
    return { code, lines: text.trimEnd().split('\n') };
  }
  const line = (lines: string[], name: string) => lines.find((l) => l.slice(5).startsWith(`${name}:`));

  it('says which WireGuard implementations work and why, and fails when the one it is set to does not', async () => {
    const auto = await doctor();
    const kernel = line(auto.lines, 'wireguard kernel')!;
    const userspace = line(auto.lines, 'wireguard userspace')!;
    // Each is ok with what it found, or a skip with the reason (auto needs only one of them).
    expect(kernel).to.match(
      /^(ok {3}wireguard kernel: `ip link add … type wireguard` works|skip wireguard kernel: not available: kernel module missing or not allowed \(ip link add dev dn42wgprobe type wireguard exited \d+: .+\))$/,
    );
    expect(userspace).to.match(
      /^(ok {3}wireguard userspace: \/\S+ \(wireguard-go v\S+\)|skip wireguard userspace: not available: wireguard-go not found or not executable)/,
    );
    const expected = kernel.startsWith('ok')
      ? 'ok   wireguard implementation: auto: kernel'
      : 'ok   wireguard implementation: auto: userspace (no kernel module)';
    if (kernel.startsWith('ok') || userspace.startsWith('ok')) expect(line(auto.lines, 'wireguard implementation')).to.equal(expected);

    const config = await writeAgentConfig(join(dir.path, 'wg.conf'), { 'command.wireguard_go': join(dir.path, 'no-such-wireguard-go') });
    const missing = await doctor('--config', config, '--wireguard-implementation', 'userspace');
    expect(missing.code).to.equal(1);
    expect(line(missing.lines, 'wireguard userspace')).to.equal(
      `FAIL wireguard userspace: ${join(dir.path, 'no-such-wireguard-go')} not found or not executable (install wireguard-go, or set command.wireguard_go)`,
    );
    expect(line(missing.lines, 'wireguard implementation')).to.equal('FAIL wireguard implementation: userspace is not available');
  });

  it('passes with the binaries installed, a private state dir, a reachable controller and a valid token: one line per check', async () => {
    const { code, lines } = await doctor('--controller-url', c.url);
    expect(code, lines.join('\n')).to.equal(0);
    expect(lines.map((l) => l.slice(0, 4).trim() + ' ' + l.slice(5).split(':')[0]).filter((l) => !/ wireguard (kernel|userspace)$/.test(l))).to.deep.equal([
      'ok binary bird',
      'ok binary birdc',
      'ok binary wg',
      'ok binary ip',
      'ok wireguard implementation',
      'ok state dir',
      'ok agent token file',
      'ok enrollment file',
      'ok controller',
      'ok agent token',
    ]);
    expect(line(lines, 'agent token')).to.equal('ok   agent token: valid for node fra1');
  });

  it('fails on a missing binary, loose permissions and a revoked token, naming each', async () => {
    const config = await writeAgentConfig(join(dir.path, 'agent.conf'), { 'command.wg': '/nonexistent/wg' });
    await chmod(stateDir, 0o777);
    await chmod(stateLayout(stateDir).token, 0o644);
    const tokenId = token.slice(0, token.indexOf('.'));
    expectResponse(await c.admin.delete(`/admin/agent-tokens/${tokenId}`)).status(204);
    const { code, lines } = await doctor('--config', config, '--controller-url', c.url);
    expect(code).to.equal(1);
    expect(line(lines, 'binary wg')).to.equal('FAIL binary wg: /nonexistent/wg not found or not executable');
    expect(line(lines, 'state dir')).to.equal(`FAIL state dir: ${stateDir} is writable by group or others (mode 777)`);
    expect(line(lines, 'agent token file')).to.equal(`FAIL agent token file: ${stateLayout(stateDir).token} mode 644, expected 600`);
    expect(line(lines, 'agent token')).to.match(/^FAIL agent token: refused: 401 invalid or expired agent token$/);
    expect(line(lines, 'binary bird')).to.match(/^ok {3}binary bird: /);
  });

  it('fails on a state dir BIRD and BIND cannot pass through when the rendered files are inside it', async () => {
    await chmod(stateDir, 0o700);
    const { code, lines } = await doctor();
    expect(code).to.equal(1);
    expect(line(lines, 'state dir')).to.equal(
      `FAIL state dir: ${stateDir} mode 700: BIRD and BIND (running as their own users) cannot reach the rendered files; expected 711`,
    );
    const elsewhere = await doctor('--rendered-dir', join(dir.path, 'rendered'));
    expect(line(elsewhere.lines, 'state dir')).to.equal(`ok   state dir: ${stateDir} mode 700`);
  });

  it('fails when the controller cannot be reached, and exits 1 as a program', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const { code, lines } = await doctor('--controller-url', closed);
    expect(code).to.equal(1);
    expect(line(lines, 'controller')).to.match(new RegExp(`^FAIL controller: ${closed}/control/v1 unreachable`));
    expect(line(lines, 'agent token')).to.equal('skip agent token: controller unreachable');

    const run = await runAgent(['--doctor', '--state-dir', stateDir, '--controller-url', closed]);
    expect(run.code).to.equal(1);
    expect(run.stdout.trimEnd().split('\n')).to.have.length(lines.length);
    const ok = await runAgent(['--doctor', '--state-dir', stateDir, '--controller-url', c.url]);
    expect(ok.code, ok.stdout).to.equal(0);
  });

  it('skips the controller checks without a controller and accepts a state dir still to be created', async () => {
    const { code, lines } = await doctor('--state-dir', join(dir.path, 'fresh'));
    expect(code).to.equal(0);
    expect(line(lines, 'state dir')).to.equal(`ok   state dir: ${join(dir.path, 'fresh')} absent; created at the first run`);
    expect(line(lines, 'controller')).to.equal('skip controller: no --controller-url');
  });
});
