import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { commitVersion, pack } from '../../../agent/update/pack.js';
import { isReleaseFileName } from '../../../domain/release/rules.js';

describe('agent packaging (npm run agent:pack)', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dn42-agent-pack-spec-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('versions releases 1.0.<git commit count>', () => {
    const count = execFileSync('git', ['rev-list', '--count', 'HEAD'], { encoding: 'utf8' }).trim();
    expect(commitVersion()).to.equal(`1.0.${count}`);
  });

  it('builds dn42-agent-<v>.tgz (an allowed release file name) whose bundle runs without node_modules and knows its version', async () => {
    const tarball = await pack(join(dir, 'out'), '1.0.42');
    expect(tarball).to.equal(join(dir, 'out', 'dn42-agent-1.0.42.tgz'));
    expect(isReleaseFileName('dn42-agent-1.0.42.tgz')).to.equal(true);
    const entries = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).trim().split('\n').sort();
    expect(entries).to.include.members([
      'package/VERSION',
      'package/dist/VERSION',
      'package/dist/dn42-agent.mjs',
      'package/dist/dn42-agent-installer.mjs',
      'package/package.json',
    ]);

    // Unpacked outside the repository, so nothing can come from its node_modules
    const root = join(dir, 'unpacked');
    execFileSync('mkdir', ['-p', root]);
    execFileSync('tar', ['-xzf', tarball, '-C', root, '--strip-components=1']);
    expect((await readFile(join(root, 'VERSION'), 'utf8')).trim()).to.equal('1.0.42');
    expect(execFileSync(process.execPath, [join(root, 'dist/dn42-agent.mjs'), '--version'], { encoding: 'utf8', cwd: root }).trim()).to.equal('1.0.42');
    const usage = (() => {
      try {
        execFileSync(process.execPath, [join(root, 'dist/dn42-agent-installer.mjs')], { encoding: 'utf8', stdio: 'pipe' });
        return '';
      } catch (e) {
        return (e as { stderr: string; status: number }).stderr + (e as { status: number }).status;
      }
    })();
    expect(usage).to.equal('usage: dn42-agent-installer <plan.json>\n2');
  });
});
