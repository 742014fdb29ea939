import { expect } from 'chai';
import { createControlApp } from '../../../../http/control/app.js';
import { api, expectResponse } from '../../../support/http.js';
import { givenPortalSession } from '../../../support/portal.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { ADMIN_TOKEN } from '../support.js';

const ALL_MISSING = 'portal login is not configured (missing: PORTAL_OIDC_ISSUER, PORTAL_CLIENT_ID, PORTAL_CLIENT_SECRET, PORTAL_URL)';

/** A control server deployed apart from the identity service, with its portal settings missing or pointing nowhere. */
describe('Portal login without (complete) settings: 503 on the login endpoints, the rest works', function () {
  this.timeout(60_000);
  const systems: TestSystem[] = [];
  const servers: { close(): Promise<void> }[] = [];

  async function controlWith(env: Record<string, string>): Promise<{ sys: TestSystem; client: ReturnType<typeof api> }> {
    const sys = await createTestSystem({ env: { ADMIN_TOKEN, ...env } });
    const server = await startApp(createControlApp(sys.context));
    systems.push(sys);
    servers.push(server);
    return { sys, client: api(server.url) };
  }
  after(async () => {
    for (const s of servers) await s.close();
    for (const s of systems) await s.close();
  });

  it('answers every login endpoint and refresh-claims with 503 naming the missing settings; /me, logout and /admin work', async () => {
    const { sys, client } = await controlWith({});
    expectResponse(await client.get('/control/v1/autopeering/auth/login?next=/x'))
      .status(503)
      .detail(ALL_MISSING);
    expectResponse(await client.get('/control/v1/autopeering/auth/login-url'))
      .status(503)
      .detail(ALL_MISSING);
    expectResponse(await client.get('/control/v1/autopeering/auth/callback?code=a&state=b'))
      .status(503)
      .detail(ALL_MISSING);
    expectResponse(await client.post('/control/v1/autopeering/auth/exchange', { handoff: 'x' }))
      .status(503)
      .detail(ALL_MISSING);
    const token = await givenPortalSession(sys);
    expectResponse(await client.post('/control/v1/autopeering/auth/refresh-claims', undefined, { token }))
      .status(503)
      .detail(ALL_MISSING);
    expectResponse(await client.get('/control/v1/autopeering/session', { token: 'a.b.c' }))
      .status(503)
      .detail('identity service not configured (missing: PORTAL_OIDC_ISSUER)');
    expectResponse(await client.get('/control/v1/autopeering/me', { token })).status(200);
    expectResponse(await client.get('/control/v1/admin/nodes', { token: ADMIN_TOKEN })).status(200);
    expectResponse(await client.post('/control/v1/autopeering/auth/logout', undefined, { token })).status(204);
  });

  it('names only the settings that are missing', async () => {
    const { client } = await controlWith({ PORTAL_OIDC_ISSUER: 'http://127.0.0.1:9', PORTAL_CLIENT_ID: 'portal' });
    expectResponse(await client.get('/control/v1/autopeering/auth/login'))
      .status(503)
      .detail('portal login is not configured (missing: PORTAL_CLIENT_SECRET, PORTAL_URL)');
  });

  it('answers 503 while the configured identity service cannot be reached (login and /session)', async () => {
    const { client } = await controlWith({
      PORTAL_OIDC_ISSUER: 'http://127.0.0.1:9',
      PORTAL_CLIENT_ID: 'portal',
      PORTAL_CLIENT_SECRET: 'portal-secret-0123456789',
      PORTAL_URL: 'https://portal.spec.example/',
    });
    expectResponse(await client.get('/control/v1/autopeering/auth/login'))
      .status(503)
      .detail('identity service unavailable; retry later');
    expectResponse(await client.get('/control/v1/autopeering/auth/login-url'))
      .status(503)
      .detail('identity service unavailable; retry later');
    const jwt = 'eyJhbGciOiJFZERTQSIsImtpZCI6ImsifQ.eyJzdWIiOiJ4In0.c2ln';
    expectResponse(await client.get('/control/v1/autopeering/session', { token: jwt }))
      .status(503)
      .detail('identity service unavailable; retry later');
    // The callback of an unknown login still lands on the configured portal.
    const res = await client.get('/control/v1/autopeering/auth/callback?code=a&state=b');
    expect(res.status).to.equal(302);
    expect(res.headers.get('location')).to.equal('https://portal.spec.example/auth/complete?error=login_expired');
  });
});
