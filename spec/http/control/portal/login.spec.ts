import { expect } from 'chai';
import { createControlApp } from '../../../../http/control/app.js';
import { registerLocalPortalClient } from '../../../../http/control/portal/local-client.js';
import { INVALID_HANDOFF } from '../../../../http/control/portal/login.js';
import { siteRelativeNext } from '../../../../http/control/portal/next.js';
import { api, expectResponse } from '../../../support/http.js';
import { grantFor, listenOn, mintSession } from '../../../support/identity.js';
import { GAMMA_ASN, GAMMA_MNT, OIDC_ADMIN_TOKEN, sshSession, startOidc, type OidcFixture } from '../../../support/oidc.js';
import { portalLogin, type PortalLogin } from '../../../support/portal-login.js';
import { freePort } from '../../../support/ports.js';
import { rpsl } from '../../../support/registry.js';
import { subjectOf } from '../../../../commands/identity/sessions.js';

type Client = ReturnType<typeof api>;

/**
 * The portal login end to end, over HTTP only, against the real identity
 * service in the same process (`npm start` wiring: the portal registered as a
 * confidential client at start, no PORTAL_* setting): /auth/login, the
 * authorization page's API with an SSH signature made by `ssh-keygen -Y sign`,
 * approve, the callback, the handoff exchange, /me, refresh-claims with an
 * expired upstream access token, logout.
 */
describe('Portal login through the identity service (openid-client relying party)', function () {
  this.timeout(120_000);
  let f: OidcFixture;
  let control: { url: string; close(): Promise<void> };
  let portal: Client;
  let identitySession: string;

  before(async () => {
    const controlPort = await freePort();
    f = await startOidc({ CONTROL_URL: `http://127.0.0.1:${controlPort}` });
    f.repo.put(
      'route',
      '172.20.42.0/27',
      rpsl([
        ['route', '172.20.42.0/27'],
        ['origin', `AS${GAMMA_ASN}`],
        ['mnt-by', GAMMA_MNT],
        ['source', 'DN42'],
      ]),
    );
    await f.sync();
    const local = await registerLocalPortalClient(f.sys.context);
    control = await listenOn(createControlApp(f.sys.context, { portal: { localClient: local } }), controlPort);
    portal = api(control.url);
    identitySession = (await sshSession(f)).token;
    sessionAt = f.sys.clock.now().getTime();
  });
  after(async () => {
    await control?.close();
    await f?.done();
  });
  // Tests move the clock past the 2-hour identity session: the page's user verifies again.
  let sessionAt = 0;
  beforeEach(async () => {
    if (f.sys.clock.now().getTime() - sessionAt < 3600_000) return;
    identitySession = (await grantFor(f.sys, GAMMA_MNT, GAMMA_ASN, 'ssh')).token;
    sessionAt = f.sys.clock.now().getTime();
  });

  const page = (): PortalLogin => portalLogin(f, control.url, portal, () => identitySession);
  const approve = (authorizeUrl: string, deny = false) => page().approve(authorizeUrl, deny);
  const callback = (redirectTo: string) => page().callback(redirectTo);
  const login = (next?: string) => page().login(next);
  const loggedIn = () => page().loggedIn();

  it('logs in: authorization page, ssh signature, approve, callback, one-time handoff, /me, refresh-claims, logout', async () => {
    const start = await portal.get('/control/v1/autopeering/auth/login?next=%2Frequests%2Fnew');
    expect(start.status).to.equal(302);
    const authorize = new URL(start.headers.get('location')!);
    expect(`${authorize.origin}${authorize.pathname}`).to.equal(`${f.issuer}/authorize`);
    expect(authorize.searchParams.get('code_challenge_method')).to.equal('S256');
    for (const p of ['state', 'nonce', 'code_challenge']) expect(authorize.searchParams.get(p)).to.have.length.above(20);
    expect(authorize.searchParams.get('scope')).to.equal('openid dn42');

    const complete = await callback(await approve(authorize.href));
    expect(`${complete.origin}${complete.pathname}`).to.equal(`${control.url}/portal/auth/complete`);
    expect(complete.searchParams.get('next')).to.equal('/requests/new');
    expect(complete.searchParams.has('error')).to.equal(false);
    const handoff = complete.searchParams.get('handoff')!;

    const exchanged = await portal.post('/control/v1/autopeering/auth/exchange', { handoff });
    expectResponse(exchanged).status(200);
    const profile = { sub: subjectOf(GAMMA_MNT, GAMMA_ASN), asn: GAMMA_ASN, mntner: GAMMA_MNT, route: ['172.20.42.0/27'], route6: [] };
    expect(exchanged.body.profile).to.deep.equal(profile);
    const token = exchanged.body.session_token as string;
    expect(token).to.not.equal(handoff);
    expect(new Date(exchanged.body.expires_at).getTime()).to.equal(f.sys.clock.now().getTime() + 12 * 3600_000);

    expectResponse(await portal.post('/control/v1/autopeering/auth/exchange', { handoff }))
      .status(401)
      .detail(INVALID_HANDOFF);
    // Neither the handoff code nor an upstream token is a portal credential.
    expectResponse(await portal.get('/control/v1/autopeering/me', { token: handoff })).status(401);
    const me = await portal.get('/control/v1/autopeering/me', { token });
    expectResponse(me).status(200);
    expect(me.body).to.deep.equal({ profile, expires_at: exchanged.body.expires_at });

    // The registry changes and the upstream access token (1 hour) expires: refresh-claims refreshes it silently.
    f.repo.put(
      'route6',
      'fd42:4242:10::/48',
      rpsl([
        ['route6', 'fd42:4242:10::/48'],
        ['origin', `AS${GAMMA_ASN}`],
        ['mnt-by', GAMMA_MNT],
        ['source', 'DN42'],
      ]),
    );
    await f.sync();
    const before = await upstreamOf(token);
    f.sys.clock.advance(2 * 3600_000);
    const refreshed = await portal.post('/control/v1/autopeering/auth/refresh-claims', undefined, { token });
    expectResponse(refreshed).status(200);
    expect(refreshed.body.profile).to.deep.equal({ ...profile, route6: ['fd42:4242:10::/48'] });
    const after = await upstreamOf(token);
    expect(after.access_token).to.not.equal(before.access_token);
    expect(after.refresh_token).to.not.equal(before.refresh_token);
    expect((await portal.get('/control/v1/autopeering/me', { token })).body.profile.route6).to.deep.equal(['fd42:4242:10::/48']);
    // Within the new token's hour no refresh is needed: the same access token serves.
    expectResponse(await portal.post('/control/v1/autopeering/auth/refresh-claims', undefined, { token })).status(200);
    expect((await upstreamOf(token)).access_token).to.equal(after.access_token);

    expectResponse(await portal.post('/control/v1/autopeering/auth/logout', undefined, { token })).status(204);
    expectResponse(await portal.get('/control/v1/autopeering/me', { token }))
      .status(401)
      .detail('invalid or expired portal session');
    expectResponse(await portal.post('/control/v1/autopeering/auth/refresh-claims', undefined, { token })).status(401);
  });

  /** The stored upstream tokens of the session of a portal token (they never leave the server). */
  async function upstreamOf(token: string): Promise<{ access_token: string; refresh_token: string }> {
    const { createHash } = await import('node:crypto');
    const { rows } = await f.sys.pool.query('SELECT access_token, refresh_token FROM portal_sessions WHERE token_sha256 = $1', [
      createHash('sha256').update(token).digest('hex'),
    ]);
    return rows[0];
  }

  it('answers the same authorization URL from /auth/login-url', async () => {
    const res = await portal.get('/control/v1/autopeering/auth/login-url?next=/nodes');
    expectResponse(res).status(200);
    const complete = await callback(await approve(res.body.authorize_url));
    expect(complete.searchParams.get('next')).to.equal('/nodes');
    expect(complete.searchParams.get('handoff')).to.be.a('string');
  });

  it('keeps next only when site-relative: absolute and protocol-relative addresses are discarded', async () => {
    for (const next of ['https://evil.example/x', '//evil.example/x', '/\\evil.example/x', 'javascript:alert(1)', 'requests']) {
      const complete = await login(next);
      expect(complete.searchParams.has('next'), next).to.equal(false);
      expect(complete.searchParams.get('handoff'), next).to.be.a('string');
      expect(complete.origin).to.equal(control.url);
    }
    expect(siteRelativeNext('/requests/7?tab=live')).to.equal('/requests/7?tab=live');
    for (const bad of ['/\tevil', '/a\\b', '/x\n', `/${'a'.repeat(2048)}`]) expect(siteRelativeNext(bad), bad).to.equal(null);
  });

  it('redirects every callback failure to the completion page with error=', async () => {
    const errorOf = async (query: string) => {
      const res = await portal.get(`/control/v1/autopeering/auth/callback${query}`);
      expect(res.status, res.text).to.equal(302);
      const to = new URL(res.headers.get('location')!);
      expect(`${to.origin}${to.pathname}`).to.equal(`${control.url}/portal/auth/complete`);
      expect(to.searchParams.has('handoff')).to.equal(false);
      return to.searchParams.get('error');
    };
    expect(await errorOf('')).to.equal('invalid_request');
    expect(await errorOf('?code=x&state=never-issued')).to.equal('login_expired');

    // A callback replayed: the login transaction was used up by the first one.
    const start = await portal.get('/control/v1/autopeering/auth/login?next=/x');
    const redirectTo = await approve(start.headers.get('location')!);
    expect((await callback(redirectTo)).searchParams.get('handoff')).to.be.a('string');
    const replay = await callback(redirectTo);
    expect(replay.searchParams.get('error')).to.equal('login_expired');

    // The user declines at the identity service; next is kept on the error redirect too.
    const declined = await portal.get('/control/v1/autopeering/auth/login?next=/y');
    const denied = await callback(await approve(declined.headers.get('location')!, true));
    expect(denied.searchParams.get('error')).to.equal('access_denied');
    expect(denied.searchParams.get('next')).to.equal('/y');

    // The login transaction outlives neither its 20 minutes nor a state without its code.
    const slow = await portal.get('/control/v1/autopeering/auth/login');
    const slowRedirect = await approve(slow.headers.get('location')!);
    f.sys.clock.advance(21 * 60_000);
    expect((await callback(slowRedirect)).searchParams.get('error')).to.equal('login_expired');
    const noCode = await portal.get('/control/v1/autopeering/auth/login');
    const state = new URL(noCode.headers.get('location')!).searchParams.get('state')!;
    expect(await errorOf(`?state=${encodeURIComponent(state)}`)).to.equal('invalid_request');

    // A code redeemed with another login's nonce: the ID token check fails.
    const a = await portal.get('/control/v1/autopeering/auth/login');
    const b = await portal.get('/control/v1/autopeering/auth/login');
    const aState = new URL(a.headers.get('location')!).searchParams.get('state')!;
    const bNonce = new URL(b.headers.get('location')!).searchParams.get('nonce')!;
    const { createHash } = await import('node:crypto');
    await f.sys.pool.query('UPDATE portal_login_transactions SET nonce = $2 WHERE state_sha256 = $1', [
      createHash('sha256').update(aState).digest('hex'),
      bNonce,
    ]);
    expect((await callback(await approve(a.headers.get('location')!))).searchParams.get('error')).to.equal('exchange_failed');
  });

  it('lets one of two concurrent exchanges of a handoff code win; the other is refused', async () => {
    const complete = await login();
    const handoff = complete.searchParams.get('handoff');
    const results = await Promise.all([1, 2, 3].map(() => portal.post('/control/v1/autopeering/auth/exchange', { handoff })));
    expect(results.map((r) => r.status).sort()).to.deep.equal([200, 401, 401]);
  });

  it('refuses a handoff code after its two minutes, and a body that is not {handoff}', async () => {
    const complete = await login();
    f.sys.clock.advance(121_000);
    expectResponse(await portal.post('/control/v1/autopeering/auth/exchange', { handoff: complete.searchParams.get('handoff') }))
      .status(401)
      .detail(INVALID_HANDOFF);
    expectResponse(await portal.post('/control/v1/autopeering/auth/exchange', {})).status(422);
  });

  it('refreshes silently when the identity service refuses an access token our clock still deems live, then retries UserInfo once', async () => {
    const { token } = await loggedIn();
    const before = await upstreamOf(token);
    // As if the provider had retired the token early: UserInfo answers invalid_token.
    await f.sys.pool.query('UPDATE portal_sessions SET access_token = $2 WHERE access_token = $1', [before.access_token, 'retired-by-the-provider']);
    const res = await portal.post('/control/v1/autopeering/auth/refresh-claims', undefined, { token });
    expectResponse(res).status(200);
    expect(res.body.profile).to.deep.include({ asn: GAMMA_ASN, mntner: GAMMA_MNT });
    const after = await upstreamOf(token);
    expect(after.access_token).to.not.be.oneOf([before.access_token, 'retired-by-the-provider']);
    expect(after.refresh_token).to.not.equal(before.refresh_token);
  });

  it('spends a rotating refresh token once when two refresh-claims of one session race', async () => {
    const { token } = await loggedIn();
    f.sys.clock.advance(3600_000);
    const results = await Promise.all([1, 2].map(() => portal.post('/control/v1/autopeering/auth/refresh-claims', undefined, { token })));
    expect(results.map((r) => r.status)).to.deep.equal([200, 200]);
  });

  it('answers refresh-claims with 401 once the identity service no longer accepts the login (maintainer gone)', async () => {
    const { token } = await loggedIn();
    f.repo.put(
      'aut-num',
      `AS${GAMMA_ASN}`,
      rpsl([
        ['aut-num', `AS${GAMMA_ASN}`],
        ['as-name', 'GAMMA-AS'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    );
    await f.sync();
    try {
      expectResponse(await portal.post('/control/v1/autopeering/auth/refresh-claims', undefined, { token }))
        .status(401)
        .detail('the identity service no longer accepts this login: log in again');
      // The portal session itself still answers with its cached claims.
      expectResponse(await portal.get('/control/v1/autopeering/me', { token })).status(200);
    } finally {
      f.repo.put(
        'aut-num',
        `AS${GAMMA_ASN}`,
        rpsl([
          ['aut-num', `AS${GAMMA_ASN}`],
          ['as-name', 'GAMMA-AS'],
          ['admin-c', 'GAMMA-DN42'],
          ['mnt-by', GAMMA_MNT],
          ['source', 'DN42'],
        ]),
      );
      await f.sync();
    }
  });

  it('verifies an identity-service session JWT at /autopeering/session against the JWKS', async () => {
    const res = await portal.get('/control/v1/autopeering/session', { token: identitySession });
    expectResponse(res).status(200);
    expect(res.body).to.deep.include({ asn: GAMMA_ASN, mntner: GAMMA_MNT, method: 'ssh', sub: subjectOf(GAMMA_MNT, GAMMA_ASN) });
    expect(res.body.expires_at).to.be.a('string');
    expectResponse(await portal.get('/control/v1/autopeering/session'))
      .status(401)
      .detail('missing bearer token');
    expectResponse(await portal.get('/control/v1/autopeering/session', { token: 'x.y.z' }))
      .status(401)
      .detail('invalid or expired identity session token');
    const otherAudience = await mintSession(
      f.sys,
      { asn: GAMMA_ASN, mnt: GAMMA_MNT, method: 'ssh', sub: subjectOf(GAMMA_MNT, GAMMA_ASN) },
      { audience: 'https://elsewhere' },
    );
    expectResponse(await portal.get('/control/v1/autopeering/session', { token: otherAudience })).status(401);
    // A portal session token is not an identity session, nor the other way round.
    const { token } = await loggedIn();
    expectResponse(await portal.get('/control/v1/autopeering/session', { token })).status(401);
    expectResponse(await portal.get('/control/v1/autopeering/me', { token: identitySession })).status(401);
  });

  it('lets one client address start 60 logins per 10 minutes, then answers 429', async () => {
    const from = (address: string) => ({ headers: { 'cf-connecting-ip': address } });
    for (let i = 0; i < 60; i++) expect((await portal.get('/control/v1/autopeering/auth/login-url', from('10.1.2.3'))).status).to.equal(200);
    expectResponse(await portal.get('/control/v1/autopeering/auth/login', from('10.1.2.3')))
      .status(429)
      .detail('too many portal logins from this address; retry in a few minutes');
    expect((await portal.get('/control/v1/autopeering/auth/login', from('10.1.2.4'))).status).to.equal(302);
    f.sys.clock.advance(600_000);
    expect((await portal.get('/control/v1/autopeering/auth/login', from('10.1.2.3'))).status).to.equal(302);
  });

  it('registers the portal client once: a second start finds it (idempotent)', async () => {
    const again = await registerLocalPortalClient(f.sys.context);
    const list = await api(f.url, { token: OIDC_ADMIN_TOKEN }).get('/api/v1/admin/oauth-clients');
    expectResponse(list).status(200);
    const portals = list.body.clients.filter((c: { name: string }) => c.name === 'Autopeering portal');
    expect(portals).to.have.length(1);
    expect(portals[0]).to.deep.include({
      client_id: again!.clientId,
      confidential: true,
      redirect_uris: [`${control.url}/control/v1/autopeering/auth/callback`],
    });
  });
});
