import { expect } from 'chai';
import { registerClient, startOidc, type OidcFixture, type RegisteredClient } from '../../../support/oidc.js';

const APP_ORIGIN = 'https://spa.cors.example';
const OTHER_ORIGIN = 'https://evil.cors.example';

/**
 * CORS of the identity service: discovery and JWKS readable from any origin
 * (`*`, no credentials); token and UserInfo only from the origin of a
 * registered client's redirect URI; every other endpoint sends no CORS header.
 */
describe('Identity CORS: open discovery, client-bound token and UserInfo', function () {
  this.timeout(60_000);
  let f: OidcFixture;
  let app: RegisteredClient;

  before(async () => {
    f = await startOidc();
    app = await registerClient(f, { redirect_uris: [`${APP_ORIGIN}/callback`], confidential: false, name: 'Browser App' });
  });
  after(async () => {
    await f?.done();
  });

  const preflight = (path: string, origin: string, method = 'POST') =>
    fetch(`${f.url}${path}`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'content-type' },
    });
  const tokenFrom = (origin: string) =>
    fetch(`${f.url}/token`, {
      method: 'POST',
      headers: { Origin: origin, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'not-a-code',
        redirect_uri: `${APP_ORIGIN}/callback`,
        code_verifier: 'v'.repeat(43),
        client_id: app.client_id,
      }),
    });

  it('lets any origin read discovery and the JWKS with `*` and never with credentials', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/jwks.json']) {
      const res = await fetch(`${f.url}${path}`, { headers: { Origin: OTHER_ORIGIN } });
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('access-control-allow-origin'), path).to.equal('*');
      expect(res.headers.get('access-control-allow-credentials'), path).to.equal(null);
    }
    const pre = await preflight('/.well-known/openid-configuration', OTHER_ORIGIN, 'GET');
    expect(pre.status).to.equal(204);
    expect(pre.headers.get('access-control-allow-origin')).to.equal('*');
  });

  it('allows a token preflight and request from the origin of a registered redirect URI, without credentials', async () => {
    const pre = await preflight('/token', APP_ORIGIN);
    expect(pre.headers.get('access-control-allow-origin')).to.equal(APP_ORIGIN);
    expect(pre.headers.get('access-control-allow-credentials')).to.equal(null);
    const res = await tokenFrom(APP_ORIGIN);
    expect(res.status).to.equal(400);
    expect((await res.json()).error).to.equal('invalid_grant');
    expect(res.headers.get('access-control-allow-origin')).to.equal(APP_ORIGIN);
    expect(res.headers.get('access-control-allow-credentials')).to.equal(null);
  });

  it('refuses token and UserInfo to an origin no client registered: no CORS header on the preflight or the request', async () => {
    for (const path of ['/token', '/userinfo']) {
      const pre = await preflight(path, OTHER_ORIGIN);
      expect(pre.headers.get('access-control-allow-origin'), path).to.equal(null);
      expect(pre.headers.get('access-control-allow-methods'), path).to.equal(null);
    }
    const res = await tokenFrom(OTHER_ORIGIN);
    expect(res.status).to.equal(400);
    expect(res.headers.get('access-control-allow-origin')).to.equal(null);
  });

  it('sends no CORS header on the other identity endpoints', async () => {
    for (const path of ['/api/v1/registry/status', '/authorize']) {
      const res = await fetch(`${f.url}${path}`, { headers: { Origin: APP_ORIGIN } });
      expect(res.headers.get('access-control-allow-origin'), path).to.equal(null);
    }
    const pre = await preflight('/api/v1/challenge', APP_ORIGIN);
    expect(pre.headers.get('access-control-allow-origin')).to.equal(null);
  });
});
