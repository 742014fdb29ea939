import type { IncomingMessage } from 'node:http';
import { expect } from 'chai';
import { clientAddress, TrustedProxies } from '../../../http/shared/client-address.js';
import { createControlApp } from '../../../http/control/app.js';
import { ConfigError, loadConfig } from '../../../infra/config.js';
import { api } from '../../support/http.js';
import { createTestSystem, startApp } from '../../support/system.js';
import { ADMIN_TOKEN, auditEntries } from '../control/support.js';

const request = (peer: string, headers: Record<string, string> = {}) => ({ socket: { remoteAddress: peer }, headers }) as unknown as IncomingMessage;

describe('client address: forwarding headers only from trusted proxies', () => {
  const proxies = new TrustedProxies(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, 2001:db8:ff::/48,192.0.2.1' }).trustedProxies);

  it('reads TRUSTED_PROXIES as addresses and CIDR prefixes and refuses anything else naming the setting', () => {
    expect(loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8, ::1,192.0.2.1' }).trustedProxies).to.deep.equal(['10.0.0.0/8', '::1/128', '192.0.2.1/32']);
    expect(loadConfig({}).trustedProxies).to.equal(undefined);
    for (const bad of ['10.0.0.0/33', 'proxy.example', '10.1', '10.0.0.1,', 'fe80::1%eth0', '10.0.0.0/8/1']) {
      expect(() => loadConfig({ TRUSTED_PROXIES: bad }), bad).to.throw(ConfigError, /^TRUSTED_PROXIES: .* is not an IP address or CIDR prefix$/);
    }
  });

  it('uses the TCP peer and ignores both headers when no proxy is trusted', () => {
    const none = new TrustedProxies();
    expect(clientAddress(request('198.51.100.9', { 'cf-connecting-ip': '203.0.113.1', 'x-forwarded-for': '203.0.113.2' }), none)).to.equal('198.51.100.9');
  });

  it('ignores the headers of a peer that is not a trusted proxy', () => {
    expect(clientAddress(request('198.51.100.9', { 'cf-connecting-ip': '203.0.113.1', 'x-forwarded-for': '203.0.113.2' }), proxies)).to.equal('198.51.100.9');
  });

  it("believes a trusted proxy's connecting-client header first, then the nearest untrusted X-Forwarded-For hop", () => {
    expect(clientAddress(request('10.1.2.3', { 'cf-connecting-ip': '203.0.113.1', 'x-forwarded-for': '203.0.113.2' }), proxies)).to.equal('203.0.113.1');
    // A client can write any hop on the left; the hops the trusted proxies added are on the right.
    expect(clientAddress(request('10.1.2.3', { 'x-forwarded-for': '192.0.2.99, 203.0.113.2, 10.9.9.9' }), proxies)).to.equal('203.0.113.2');
    expect(clientAddress(request('::ffff:10.1.2.3', { 'x-forwarded-for': '2001:DB8:0:0::7' }), proxies)).to.equal('2001:db8::7');
    expect(clientAddress(request('2001:db8:ff::1', { 'x-forwarded-for': '10.0.0.5, 10.0.0.6' }), proxies)).to.equal('10.0.0.5');
  });

  it('falls back to the peer when a trusted header is not an address', () => {
    expect(clientAddress(request('10.1.2.3', { 'cf-connecting-ip': 'evil', 'x-forwarded-for': 'not-an-ip' }), proxies)).to.equal('10.1.2.3');
    expect(clientAddress(request('10.1.2.3', { 'cf-connecting-ip': 'evil', 'x-forwarded-for': '203.0.113.5' }), proxies)).to.equal('203.0.113.5');
    expect(clientAddress(request('10.1.2.3'), proxies)).to.equal('10.1.2.3');
  });

  it('audits the peer address, not a forged header, on a server without trusted proxies', async function () {
    this.timeout(60_000);
    const sys = await createTestSystem({ env: { ADMIN_TOKEN, TRUSTED_PROXIES: '' } });
    const server = await startApp(createControlApp(sys.context));
    try {
      await api(server.url).delete('/control/v1/admin/nodes/a', { headers: { 'x-forwarded-for': '203.0.113.77', 'cf-connecting-ip': '203.0.113.78' } });
      const [entry] = await auditEntries(sys, 1);
      expect(entry.actor).to.equal('anonymous@127.0.0.1');
    } finally {
      await server.close();
      await sys.close();
    }
  });
});
