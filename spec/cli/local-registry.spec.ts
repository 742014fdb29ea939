import { expect } from 'chai';
import { withLocalRegistry } from '../../cli/local-registry.js';
import { loadConfig } from '../../infra/config.js';

describe('withLocalRegistry', () => {
  const both = new Set(['identity', 'registry'] as const);

  it('points the identity service at the replica in the same process with a shared random token', () => {
    const config = withLocalRegistry(loadConfig({ REGISTRY_PORT: '9182' }), both);
    expect(config.registryUrl).to.equal('http://127.0.0.1:9182');
    expect(config.registryServiceToken).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(withLocalRegistry(loadConfig({}), both).registryServiceToken).to.not.equal(config.registryServiceToken);
  });

  it('dials loopback when the services listen on every address, brackets IPv6', () => {
    expect(withLocalRegistry(loadConfig({ BIND_HOST: '0.0.0.0' }), both).registryUrl).to.equal('http://127.0.0.1:8082');
    expect(withLocalRegistry(loadConfig({ BIND_HOST: '::1' }), both).registryUrl).to.equal('http://[::1]:8082');
  });

  it('keeps explicit settings and leaves other role sets alone', () => {
    const token = 'an-explicit-service-token-of-enough-length';
    expect(withLocalRegistry(loadConfig({ REGISTRY_SERVICE_TOKEN: token }), both).registryServiceToken).to.equal(token);
    expect(withLocalRegistry(loadConfig({ REGISTRY_URL: 'https://registry.example' }), both).registryUrl).to.equal('https://registry.example');
    expect(withLocalRegistry(loadConfig({}), new Set(['identity'] as const)).registryUrl).to.equal(undefined);
    expect(withLocalRegistry(loadConfig({}), new Set(['registry'] as const)).registryUrl).to.equal(undefined);
  });
});
