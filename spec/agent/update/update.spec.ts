import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, readlink, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { expect } from 'chai';
import { checkForUpdate, type UpdateOptions } from '../../../agent/update/index.js';
import { stagingDir } from '../../../agent/update/layout.js';
import { readReportedVersion } from '../../../agent/update/marker.js';
import { records } from '../../../agent/update/records.js';
import { uploadRelease } from '../../support/releases.js';
import { startOpsServer, testAgent, type OpsServer, type TestAgent } from '../support/ops.js';
import { eventually } from '../../support/wait.js';
import { installedPrefix, packStandIn, RESTART_STAND_IN } from '../support/releases.js';

const tgz = (v: string) => `dn42-agent-${v}.tgz`;

describe('agent self-update (local release tarballs, real control server, detached installer)', function () {
  this.timeout(60_000);
  let server: OpsServer;
  let agent: TestAgent;
  let prefix: string;
  let options: Partial<UpdateOptions>;

  beforeEach(async () => {
    server = await startOpsServer();
    agent = await testAgent(server, { version: '1.0.1' });
    prefix = await installedPrefix(agent.stateDir, '1.0.1');
    options = { prefix, launcher: 'detached', restart: [process.execPath, RESTART_STAND_IN, prefix, agent.stateDir], gateTimeoutMs: 15_000 };
  });
  afterEach(async () => {
    await agent.cleanup();
    await server.close();
  });

  /** Uploads `version` (stand-in tarball) and makes it the fleet's target. */
  const release = async (version: string, pack: { broken?: boolean; stamped?: string } = {}) => {
    const upload = await uploadRelease(server.control.url, version, [{ name: tgz(version), content: await packStandIn(agent.stateDir, version, pack) }]);
    expect(upload.status, upload.text).to.equal(201);
    const target = await server.control.admin.post('/admin/agent-releases/target', { version });
    expect(target.status, target.text).to.equal(200);
    return upload.body as { version: string; wheels: { filename: string; sha256: string; size: number }[] };
  };
  const current = async () => readlink(join(prefix, 'current'));
  const installed = async () => (await readdir(join(prefix, 'versions'))).sort();
  const offer = (manifest: { version: string; wheels: unknown[] }) => ({ version: manifest.version, wheels: manifest.wheels });
  const installerDone = () => eventually(() => records.result.read(agent.stateDir), 30_000, 'the installer outcome');
  const latestReport = async () => (await server.control.admin.get(`/admin/nodes/${server.nodeId}/health`)).body.report;

  it('installs nothing without a target, for the same version, or for an older one (numeric: 1.0.10 > 1.0.2)', async () => {
    await checkForUpdate(agent.rt, undefined, options);
    await release('1.0.2');
    for (const version of ['1.0.2', '1.0.10']) {
      const newer = await testAgent(server, { version });
      await checkForUpdate(newer.rt, { version: '1.0.2', wheels: [] }, options);
      await newer.cleanup();
    }
    expect(await current()).to.equal('versions/1.0.1');
    expect(await installed()).to.deep.equal(['1.0.1']);
    expect(existsSync(stagingDir(prefix, '1.0.2'))).to.equal(false);
    expect(await records.installing.read(agent.stateDir)).to.equal(null);
  });

  it('does not update an agent that is not installed under the prefix (a source checkout)', async () => {
    const manifest = await release('1.0.2');
    await checkForUpdate(agent.rt, offer(manifest), { ...options, prefix: join(agent.stateDir, 'no-install') });
    expect(existsSync(join(agent.stateDir, 'no-install'))).to.equal(false);
    expect(agent.ring.recent().map((e) => e.message)).to.include('agent update available, but this agent is not installed under the prefix; not updating');
  });

  it('discards a release whose bytes do not match the manifest sha256: nothing installed, the failure reported to the server', async () => {
    // Given a target whose stored file was altered after upload (same size, one byte flipped)
    const manifest = await release('1.0.2');
    const { rows } = await server.control.sys.pool.query(`SELECT content FROM agent_release_files WHERE version = '1.0.2'`);
    const altered = Buffer.from(rows[0].content as Buffer);
    altered[altered.length - 1] ^= 0xff;
    await server.control.sys.pool.query(`UPDATE agent_release_files SET content = $1 WHERE version = '1.0.2'`, [altered]);

    // When the agent is offered the update
    await checkForUpdate(agent.rt, offer(manifest), options);

    // Then nothing was installed or left behind
    expect(await current()).to.equal('versions/1.0.1');
    expect(await installed()).to.deep.equal(['1.0.1']);
    expect(existsSync(stagingDir(prefix, '1.0.2'))).to.equal(false);
    expect(await records.installing.read(agent.stateDir)).to.equal(null);
    // And the server has the report, and the log the error
    const report = await latestReport();
    expect(report).to.deep.include({ status: 'drift' });
    expect(report.drift_items).to.have.length(1);
    expect(report.drift_items[0]).to.include({ kind: 'agent_update', name: '1.0.2' });
    expect(report.drift_items[0].detail).to.match(
      new RegExp(`^discarded: sha256 mismatch for 1\\.0\\.2/${tgz('1.0.2').replace(/\./g, '\\.')}: manifest ${manifest.wheels[0].sha256}`),
    );
    expect(agent.ring.lastHour().last_error_message).to.match(/^agent update 1\.0\.2: discarded: sha256 mismatch/);

    // And the periodic check does not download it again; only a new offer retries
    await server.control.sys.pool.query(`DELETE FROM status_snapshots WHERE node_id = $1`, [server.nodeId]);
    await checkForUpdate(agent.rt, undefined, options);
    expect((await records.failure.read(agent.stateDir))?.version).to.equal('1.0.2');
    expect((await server.control.admin.get(`/admin/nodes/${server.nodeId}/status-events`)).body.events).to.deep.equal([]);
  });

  it('installs a good upgrade into versions/<v>, switches current, and passes the health gate once the new version reports', async () => {
    const manifest = await release('1.0.2');

    await checkForUpdate(agent.rt, offer(manifest), options);
    const result = await installerDone();

    expect(result).to.include({ version: '1.0.2', previous: '1.0.1', status: 'installed', detail: null });
    expect(await current()).to.equal('versions/1.0.2');
    expect(await installed()).to.deep.equal(['1.0.1', '1.0.2']);
    expect((await readFile(join(prefix, 'current', 'dist', 'VERSION'), 'utf8')).trim()).to.equal('1.0.2');
    expect((await readReportedVersion(agent.stateDir))?.version).to.equal('1.0.2');
    expect(existsSync(stagingDir(prefix, '1.0.2'))).to.equal(false);
    expect(await records.installing.read(agent.stateDir)).to.equal(null);

    // When the new agent starts, it settles the outcome once and takes nothing further
    const updated = await testAgent(server, { version: '1.0.2' });
    await checkForUpdate({ ...updated.rt, stateDir: agent.stateDir }, undefined, options);
    expect(updated.ring.recent().map((e) => e.message)).to.include('agent updated from 1.0.1 to 1.0.2');
    expect(await records.result.read(agent.stateDir)).to.equal(null);
    await updated.cleanup();
  });

  it('restores the previous version when the new one does not report before the health gate times out', async () => {
    const manifest = await release('1.0.2', { broken: true });

    await checkForUpdate(agent.rt, offer(manifest), { ...options, gateTimeoutMs: 1500 });
    const result = await installerDone();

    expect(result).to.include({
      version: '1.0.2',
      previous: '1.0.1',
      status: 'restored',
      detail: 'health gate: version 1.0.2 did not report within 2 s; restored 1.0.1',
    });
    expect(await current()).to.equal('versions/1.0.1');
    expect(await installed()).to.deep.equal(['1.0.1']);
    // The restart after the restore (the outcome is written first, for the restarted agent to find) runs the previous version again
    await eventually(async () => (await readReportedVersion(agent.stateDir))?.version === '1.0.1', 10_000, 'the restored version reporting');

    // When the restored agent checks again, it reports the failed update and does not retry it on its own
    await checkForUpdate(agent.rt, undefined, options);
    const report = await latestReport();
    expect(report.drift_items[0]).to.deep.equal({ kind: 'agent_update', name: '1.0.2', detail: result.detail });
    expect(await records.installing.read(agent.stateDir)).to.equal(null);
    expect(await records.failure.read(agent.stateDir)).to.include({ version: '1.0.2' });
  });

  /** A second package of a release: a tarball adding `package/plugins/<name>` to the version. */
  const extraPackage = async (version: string, name: string) => {
    const root = join(agent.stateDir, `extra-${version}-${name}`);
    await mkdir(join(root, 'package', 'plugins'), { recursive: true });
    await writeFile(join(root, 'package', 'plugins', name), `${name} ${version}\n`);
    return execFileSync('tar', ['-cz', '-C', root, 'package']);
  };
  const releaseOfTwo = async (version: string) => {
    const files = [
      { name: tgz(version), content: await packStandIn(agent.stateDir, version) },
      { name: `dn42-agent-plugins-${version}.tgz`, content: await extraPackage(version, 'flaps') },
    ];
    const upload = await uploadRelease(server.control.url, version, files);
    expect(upload.status, upload.text).to.equal(201);
    expect((await server.control.admin.post('/admin/agent-releases/target', { version })).status).to.equal(200);
    return upload.body as { version: string; wheels: { filename: string; sha256: string; size: number }[] };
  };

  it('updates every package of a release together: all unpacked into the one new version', async () => {
    const manifest = await releaseOfTwo('1.0.2');
    expect(manifest.wheels).to.have.length(2);

    await checkForUpdate(agent.rt, offer(manifest), options);

    expect(await installerDone()).to.include({ status: 'installed' });
    expect(await current()).to.equal('versions/1.0.2');
    expect(await readFile(join(prefix, 'current', 'plugins', 'flaps'), 'utf8')).to.equal('flaps 1.0.2\n');
    expect((await readFile(join(prefix, 'current', 'dist', 'VERSION'), 'utf8')).trim()).to.equal('1.0.2');
  });

  it('takes none of the packages when one of them does not match its sha256', async () => {
    // Given a two-package release whose second file was altered after upload
    const manifest = await releaseOfTwo('1.0.2');
    const second = manifest.wheels[1].filename;
    expect(manifest.wheels[0].filename, 'the good package is downloaded first').to.equal(tgz('1.0.2'));
    const { rows } = await server.control.sys.pool.query(`SELECT content FROM agent_release_files WHERE version = '1.0.2' AND filename = $1`, [second]);
    const altered = Buffer.from(rows[0].content as Buffer);
    altered[0] ^= 0xff;
    await server.control.sys.pool.query(`UPDATE agent_release_files SET content = $1 WHERE version = '1.0.2' AND filename = $2`, [altered, second]);

    // When the agent is offered it
    await checkForUpdate(agent.rt, offer(manifest), options);

    // Then the first, good package was not kept either: nothing staged, nothing installed
    expect(existsSync(stagingDir(prefix, '1.0.2'))).to.equal(false);
    expect(await installed()).to.deep.equal(['1.0.1']);
    expect((await latestReport()).drift_items[0].detail).to.match(new RegExp(`^discarded: sha256 mismatch for 1\\.0\\.2/${second.replace(/\./g, '\\.')}`));
  });

  it('starts the installer as a transient systemd unit (systemd-run stand-in on PATH), which installs the release', async () => {
    // Given a systemd-run that records its argv and runs the command after `--` detached, as systemd would in its own unit
    const bin = join(agent.stateDir, 'bin');
    await mkdir(bin);
    const calls = join(agent.stateDir, 'systemd-run.calls');
    await writeFile(
      join(bin, 'systemd-run'),
      `#!/usr/bin/env node
const { appendFileSync, openSync } = require('node:fs');
const { spawn } = require('node:child_process');
const argv = process.argv.slice(2);
appendFileSync(${JSON.stringify(calls)}, JSON.stringify(argv) + '\\n');
const command = argv.slice(argv.indexOf('--') + 1);
const out = openSync(${JSON.stringify(join(agent.stateDir, 'unit.log'))}, 'a');
spawn(command[0], command.slice(1), { detached: true, stdio: ['ignore', out, out] }).unref();
`,
    );
    await chmod(join(bin, 'systemd-run'), 0o755);
    const manifest = await release('1.0.2');
    const path = process.env.PATH;
    process.env.PATH = `${bin}${delimiter}${path}`;
    try {
      // When the update runs with the systemd launcher
      await checkForUpdate(agent.rt, offer(manifest), { ...options, launcher: 'systemd-run' });
    } finally {
      process.env.PATH = path;
    }

    // Then the installer ran as unit dn42-agent-update-1.0.2, collected when it ends, with the plan of this version
    const [argv] = (await readFile(calls, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as string[]);
    expect(argv.slice(0, 5)).to.deep.equal(['--unit', 'dn42-agent-update-1.0.2', '--collect', '--quiet', '--']);
    expect(argv.at(-1)).to.equal(join(agent.stateDir, 'update', 'plan-1.0.2.json'));
    expect(await installerDone()).to.include({ status: 'installed' });
    expect(await current()).to.equal('versions/1.0.2');
  });

  it('refuses a tarball whose VERSION is not the release version: nothing switched, reported as failed', async () => {
    const manifest = await release('1.0.2', { stamped: '1.0.9' });
    await checkForUpdate(agent.rt, offer(manifest), options);
    const result = await installerDone();
    expect(result).to.include({ status: 'failed', detail: 'install of 1.0.2 failed: release 1.0.2 carries VERSION "1.0.9"' });
    expect(await current()).to.equal('versions/1.0.1');
    expect(await installed()).to.deep.equal(['1.0.1']);
  });
});
