import { expect } from 'chai';
import type { Response } from 'express';
import { createControlApp } from '../../../../http/control/app.js';
import { NO_VERIFIED_ASN, requireVerifiedAsn } from '../../../../http/control/portal/auth.js';
import { HttpError } from '../../../../http/shared/errors.js';
import { PORTAL_SESSION_TTL_SECONDS } from '../../../../infra/portal/sessions.js';
import { api, expectResponse } from '../../../support/http.js';
import { givenPortalSession } from '../../../support/portal.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { ADMIN_TOKEN, addAccount, auditEntries, CAPTCHA_SECRET, loginAs } from '../support.js';

describe('Portal sessions: the guard of /autopeering and the separate trust domains', function () {
  this.timeout(30_000);
  let sys: TestSystem;
  let server: Awaited<ReturnType<typeof startApp>>;
  let client: ReturnType<typeof api>;

  before(async () => {
    sys = await createTestSystem({ env: { ADMIN_TOKEN, CONTROL_LOGIN_CAPTCHA: 'pow', CAPTCHA_SECRET } });
    server = await startApp(createControlApp(sys.context));
    client = api(server.url);
    await addAccount(sys, 'alice', 'correct horse');
  });
  after(async () => {
    await server?.close();
    await sys?.close();
  });

  it('answers /me with the cached profile and the expiry of the session', async () => {
    const token = await givenPortalSession(sys, { asn: 4242420010, mnt: 'GAMMA-MNT', route: ['172.20.10.0/27'], route6: ['fd42:10::/48'] });
    const res = await client.get('/control/v1/autopeering/me', { token });
    expectResponse(res).status(200);
    expect(res.body.profile).to.deep.include({ asn: 4242420010, mntner: 'GAMMA-MNT', route: ['172.20.10.0/27'], route6: ['fd42:10::/48'] });
    expect(res.body.expires_at).to.equal(new Date(sys.clock.now().getTime() + PORTAL_SESSION_TTL_SECONDS * 1000).toISOString());
  });

  it('refuses a missing, unknown or expired portal token with 401', async () => {
    expectResponse(await client.get('/control/v1/autopeering/me'))
      .status(401)
      .detail('missing bearer token');
    expectResponse(await client.get('/control/v1/autopeering/me', { token: 'not-a-session' }))
      .status(401)
      .detail('invalid or expired portal session');
    const token = await givenPortalSession(sys, { ttlSeconds: 60 });
    expectResponse(await client.get('/control/v1/autopeering/me', { token })).status(200);
    sys.clock.advance(60_000);
    expectResponse(await client.get('/control/v1/autopeering/me', { token }))
      .status(401)
      .detail('invalid or expired portal session');
  });

  it('refuses admin credentials on portal endpoints: the static token and an account session', async () => {
    expectResponse(await client.get('/control/v1/autopeering/me', { token: ADMIN_TOKEN }))
      .status(401)
      .detail('invalid or expired portal session');
    const login = await loginAs(client, 'alice', 'correct horse');
    expectResponse(login).status(200);
    expectResponse(await client.get('/control/v1/autopeering/me', { token: login.body.token }))
      .status(401)
      .detail('invalid or expired portal session');
    expectResponse(await client.post('/control/v1/autopeering/auth/logout', undefined, { token: ADMIN_TOKEN })).status(401);
  });

  it('refuses portal tokens on /admin and /ui', async () => {
    const token = await givenPortalSession(sys);
    expectResponse(await client.get('/control/v1/admin/nodes', { token }))
      .status(401)
      .detail('invalid or expired token');
    expectResponse(await client.get('/control/v1/ui/session', { token }))
      .status(401)
      .detail('invalid or expired token');
    expectResponse(await client.post('/control/v1/admin/nodes', { node_id: 'x' }, { token })).status(401);
  });

  it('logs out this session only, and the audit log names the portal actor', async () => {
    const first = await givenPortalSession(sys);
    const second = await givenPortalSession(sys);
    expectResponse(await client.post('/control/v1/autopeering/auth/logout', undefined, { token: first })).status(204);
    expectResponse(await client.get('/control/v1/autopeering/me', { token: first })).status(401);
    expectResponse(await client.get('/control/v1/autopeering/me', { token: second })).status(200);
    const entries = await auditEntries(sys);
    expect(entries.find((e) => e.path === '/control/v1/autopeering/auth/logout' && e.status_code === 204)?.actor).to.equal('portal:AS4242420010/GAMMA-MNT');
  });

  it('gives a session without a verified ASN the profile with nulls, and requireVerifiedAsn refuses it with 403', async () => {
    const token = await givenPortalSession(sys, { asn: null });
    const res = await client.get('/control/v1/autopeering/me', { token });
    expectResponse(res).status(200);
    expect(res.body.profile).to.deep.include({ asn: null, mntner: null });
    const locals = { portal: { sessionId: 's', asn: null, mnt: null, profile: res.body.profile, expiresAt: new Date() } };
    expect(() => requireVerifiedAsn({ locals } as unknown as Response))
      .to.throw(HttpError, NO_VERIFIED_ASN)
      .with.property('status', 403);
  });
});
