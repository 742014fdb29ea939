import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { pack } from '../../../agent/update/pack.js';
import { records } from '../../../agent/update/records.js';
import { uploadRelease } from '../../support/releases.js';
import { startOpsServer, type OpsServer } from '../support/ops.js';
import { eventually } from '../../support/wait.js';

const RESTART = fileURLToPath(new URL('../support/restart-real-agent.mjs', import.meta.url));

/** Whether `pid` names a running process (an exited one not yet reaped, state Z, is not). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/**
 * Stops the daemon whose pid the restart stand-in recorded, and waits for it to
 * exit. Only a positive pid is signalled: `Number('')` of a file caught between
 * its truncation and its write is 0, and `process.kill(0)` would signal mocha's
 * own process group.
 */
async function stopAgentOf(pidFile: string): Promise<void> {
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim());
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  process.kill(pid, 'SIGTERM');
  await eventually(() => !alive(pid), { what: `pid ${pid} gone`, timeoutMs: 10_000, everyMs: 50 }).catch(() => {
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  });
}

/**
 * The whole self-update with the real packed agent: a daemon of release
 * 1.0.100 runs from `<prefix>/current`, the operator uploads 1.0.101 and sets
 * the target, the server offers it on the heartbeat, the daemon downloads and
 * verifies it and starts the real installer detached; the installer switches
 * `current` and restarts the agent (restart stand-in, no systemd here), and the
 * health gate passes once the new daemon's first snapshot was accepted.
 */
describe('agent self-update end to end (real packed releases, real daemon)', function () {
  this.timeout(120_000);
  let server: OpsServer;
  let dir: string;
  let pidFile: string;

  before(async () => {
    server = await startOpsServer();
    dir = await mkdtemp(join(tmpdir(), 'dn42-agent-e2e-update-'));
    pidFile = join(dir, 'agent.pid');
  });
  after(async () => {
    await stopAgentOf(pidFile);
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const agentVersionOnServer = async () => {
    const status = (await server.control.admin.get('/admin/agent-releases')).body;
    return status.nodes.find((n: { node_id: string }) => n.node_id === server.nodeId)?.agent_version ?? null;
  };

  it('upgrades a running 1.0.100 daemon to 1.0.101 on the offer and reports the new version', async () => {
    // Given release 1.0.100 installed under the prefix and enrolled as fra1
    const prefix = join(dir, 'prefix');
    const stateDir = join(dir, 'state');
    const old = await pack(join(dir, 'out'), '1.0.100');
    const next = await pack(join(dir, 'out'), '1.0.101');
    await mkdir(join(prefix, 'versions', '1.0.100'), { recursive: true });
    execFileSync('tar', ['-xzf', old, '-C', join(prefix, 'versions', '1.0.100'), '--strip-components=1']);
    await symlink(join('versions', '1.0.100'), join(prefix, 'current'));
    await mkdir(stateDir, { recursive: true, mode: 0o700 });
    await writeFile(join(stateDir, 'agent.json'), JSON.stringify({ node_id: server.nodeId, agent_id: null }), { mode: 0o600 });
    await writeFile(join(stateDir, 'agent-token'), `${server.token}\n`, { mode: 0o600 });

    // And the daemon running from current
    const log = join(dir, 'agent.log');
    const agentArgs = ['--controller-url', server.control.url, '--state-dir', stateDir, '--mode', 'write-rendered', '--log-level', 'DEBUG'];
    const restart = [process.execPath, RESTART, prefix, pidFile, log, ...agentArgs];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DN42_AGENT_PREFIX: prefix,
      DN42_AGENT_RESTART: JSON.stringify(restart),
      DN42_AGENT_UPDATE_GATE_SECONDS: '60',
    };
    delete env.DN42_AGENT_VERSION;
    execFileSync(restart[0], restart.slice(1), { env });
    await eventually(async () => (await agentVersionOnServer()) === '1.0.100', 30_000, 'the 1.0.100 heartbeat');

    // When the operator uploads 1.0.101 and makes it the target
    const upload = await uploadRelease(server.control.url, '1.0.101', [{ name: 'dn42-agent-1.0.101.tgz', content: await readFile(next) }]);
    expect(upload.status, upload.text).to.equal(201);
    expect((await server.control.admin.post('/admin/agent-releases/target', { version: '1.0.101' })).status).to.equal(200);

    // Then the node runs 1.0.101 from the new current and the server sees it up to date
    await eventually(async () => (await agentVersionOnServer()) === '1.0.101', 60_000, 'the 1.0.101 heartbeat');
    expect(await readlink(join(prefix, 'current'))).to.equal('versions/1.0.101');
    // And the installer's health gate saw the new daemon report
    const result = await eventually(() => records.result.read(stateDir), 30_000, 'the installer outcome');
    expect(result).to.include({ version: '1.0.101', previous: '1.0.100', status: 'installed' });
    expect(await readFile(log, 'utf8')).to.include('installing agent 1.0.101 (detached)');
    expect(await readFile(join(stateDir, 'update', 'installer-1.0.101.log'), 'utf8')).to.match(/dn42-agent-update 1\.0\.101: installed: 1\.0\.101/);
    const status = (await server.control.admin.get('/admin/agent-releases')).body;
    expect(status.target).to.equal('1.0.101');
    expect(status.nodes.find((n: { node_id: string }) => n.node_id === server.nodeId)).to.include({ up_to_date: true });
  });
});
