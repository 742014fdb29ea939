import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'chai';
import { loadConfig, ConfigError, PROJECT_ROOT } from '../../../infra/config.js';
import { readObjects, snapshotDirectory, upstreamSource, UpstreamError } from '../../../infra/registry/git.js';

describe('Registry upstream sources', () => {
  it('wants a token for http(s) URLs without a password of their own', () => {
    expect(upstreamSource('https://git.dn42.dev/dn42/registry.git').needsToken).to.equal(true);
    expect(upstreamSource('http://git.example.net/registry').needsToken).to.equal(true);
    expect(upstreamSource('https://me:secret@git.example.net/registry').needsToken).to.equal(false);
  });

  it('needs no token for ssh, git, file URLs, scp-like remotes and local paths', () => {
    for (const source of [
      'ssh://git@git.dn42.dev/dn42/registry.git',
      'git://example.net/registry',
      'file:///srv/registry',
      'git@git.dn42.dev:dn42/registry.git',
    ]) {
      expect(upstreamSource(source), source).to.deep.equal({ location: source, needsToken: false });
    }
    expect(upstreamSource('./registry')).to.deep.equal({ location: resolve('./registry'), needsToken: false });
  });

  it('reads a plain directory (the sample registry) as a commit of its data/ files: the same files give the same commit, a change a new one', async () => {
    const work = mkdtempSync(join(tmpdir(), 'dn42-dir-source-'));
    try {
      const dir = join(work, 'registry');
      cpSync(join(PROJECT_ROOT, 'examples/registry'), dir, { recursive: true });
      const source = upstreamSource(dir);
      expect(source).to.deep.equal({ location: dir, needsToken: false, directory: true });
      const options = { signal: AbortSignal.timeout(30_000) };
      const cache = join(work, 'cache.git');
      const first = await snapshotDirectory(cache, source, options);
      expect(await snapshotDirectory(join(work, 'other-cache.git'), source, options)).to.equal(first);
      const files = await readObjects(cache, first, options);
      expect(files.map((f) => f.path)).to.include.members(['data/mntner/DEMO-MNT', 'data/aut-num/AS4242423999']);
      expect(files.map((f) => f.path).some((p) => p.includes('demo-keys'))).to.equal(false);
      writeFileSync(join(dir, 'data/aut-num/AS4242423999'), 'aut-num:            AS4242423999\nsource:             DN42\n');
      expect(await snapshotDirectory(cache, source, options)).to.not.equal(first);
      rmSync(join(dir, 'data'), { recursive: true });
      const error = await snapshotDirectory(cache, source, options).catch((err: unknown) => err);
      expect(error).to.be.instanceOf(UpstreamError);
      expect((error as Error).message).to.equal(`${dir} has no data/ folder: not a dn42 registry`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it('reads REGISTRY_SYNC_INTERVAL as whole seconds, 0 meaning off', () => {
    expect(loadConfig({}).registrySyncIntervalSeconds).to.equal(900);
    expect(loadConfig({ REGISTRY_SYNC_INTERVAL: '0' }).registrySyncIntervalSeconds).to.equal(0);
    expect(() => loadConfig({ REGISTRY_SYNC_INTERVAL: '1.5' })).to.throw(ConfigError, /REGISTRY_SYNC_INTERVAL/);
    expect(() => loadConfig({ REGISTRY_SYNC_INTERVAL: '-1' })).to.throw(ConfigError, /REGISTRY_SYNC_INTERVAL/);
  });
});
