import { expect } from 'chai';
import { resolve } from 'node:path';
import { loadConfig, ConfigError } from '../../../infra/config.js';
import { upstreamSource } from '../../../infra/registry/git.js';

describe('Registry upstream sources', () => {
  it('wants a token for http(s) URLs without a password of their own', () => {
    expect(upstreamSource('https://git.dn42.dev/dn42/registry.git').needsToken).to.equal(true);
    expect(upstreamSource('http://git.example.net/registry').needsToken).to.equal(true);
    expect(upstreamSource('https://me:secret@git.example.net/registry').needsToken).to.equal(false);
  });

  it('needs no token for ssh, git, file URLs, scp-like remotes and local paths', () => {
    for (const source of ['ssh://git@git.dn42.dev/dn42/registry.git', 'git://example.net/registry', 'file:///srv/registry', 'git@git.dn42.dev:dn42/registry.git']) {
      expect(upstreamSource(source), source).to.deep.equal({ location: source, needsToken: false });
    }
    expect(upstreamSource('./registry')).to.deep.equal({ location: resolve('./registry'), needsToken: false });
  });

  it('reads REGISTRY_SYNC_INTERVAL as whole seconds, 0 meaning off', () => {
    expect(loadConfig({}).registrySyncIntervalSeconds).to.equal(900);
    expect(loadConfig({ REGISTRY_SYNC_INTERVAL: '0' }).registrySyncIntervalSeconds).to.equal(0);
    expect(() => loadConfig({ REGISTRY_SYNC_INTERVAL: '1.5' })).to.throw(ConfigError, /REGISTRY_SYNC_INTERVAL/);
    expect(() => loadConfig({ REGISTRY_SYNC_INTERVAL: '-1' })).to.throw(ConfigError, /REGISTRY_SYNC_INTERVAL/);
  });
});
