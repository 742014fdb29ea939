import { expect } from 'chai';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { subjectOf } from '../../../support/identity.js';
import { GAMMA_EMAIL } from '../verification-support.js';
import { GAMMA_ASN, GAMMA_MNT, OIDC_RESOURCE, registerClient, sshSession, startOidc, type OidcFixture, type RegisteredClient } from '../../../support/oidc.js';
import { rpsl } from '../../../support/registry.js';
import { approveAsPage, authorizationUrl, rpConfig, signIn, tokenRequest } from './rp-support.js';

const APP_REDIRECT = 'https://app.spec.example/callback';
const NATIVE_REDIRECT = 'http://127.0.0.1:8765/callback';

/**
 * The flow a third-party application runs against the provider, with the real
 * openid-client as relying party: discovery, an authorization URL with PKCE, the
 * page's API steps (authorize-context, ssh verification, approve), the code
 * exchange, ID token and access token checked against the published JWKS,
 * UserInfo with live registry claims, refresh rotation, replay, resources, denial.
 */
describe('Identity OIDC provider: the flow of a third-party app (openid-client)', function () {
  this.timeout(120_000);
  let f: OidcFixture;
  let app: RegisteredClient;
  let config: oidc.Configuration;
  let session: string;
  const sub = subjectOf(GAMMA_MNT, GAMMA_ASN);
  const jwks = () => createRemoteJWKSet(new URL(`${f.issuer}/.well-known/jwks.json`));

  before(async () => {
    f = await startOidc();
    f.repo
      .put(
        'route',
        '172.20.42.0/27',
        rpsl([
          ['route', '172.20.42.0/27'],
          ['origin', `AS${GAMMA_ASN}`],
          ['mnt-by', GAMMA_MNT],
          ['source', 'DN42'],
        ]),
      )
      .put(
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
    app = await registerClient(f, { redirect_uris: [APP_REDIRECT], confidential: true, name: 'Gamma Looking Glass' });
    config = await rpConfig(f, app);
    session = (await sshSession(f)).token;
  });
  after(async () => {
    await f?.done();
  });

  it('publishes exactly the discovery values of the contract', () => {
    const m = config.serverMetadata();
    expect(m.issuer).to.equal(f.issuer);
    expect(m.authorization_endpoint).to.equal(`${f.issuer}/authorize`);
    expect(m.token_endpoint).to.equal(`${f.issuer}/token`);
    expect(m.userinfo_endpoint).to.equal(`${f.issuer}/userinfo`);
    expect(m.jwks_uri).to.equal(`${f.issuer}/.well-known/jwks.json`);
    expect(m.id_token_signing_alg_values_supported).to.deep.equal(['EdDSA']);
    expect(m.code_challenge_methods_supported).to.deep.equal(['S256']);
    expect(m.response_types_supported).to.deep.equal(['code']);
    expect(m.response_modes_supported).to.deep.equal(['query']);
    expect(m.grant_types_supported).to.have.members(['authorization_code', 'refresh_token']).and.have.length(2);
    expect(m.token_endpoint_auth_methods_supported).to.have.members(['client_secret_basic', 'client_secret_post', 'none']).and.have.length(3);
    expect(m.scopes_supported).to.deep.equal(['openid', 'profile', 'email', 'dn42']);
    expect(m.resource_indicators_supported).to.equal(true);
    expect(m).not.to.have.any.keys(
      'end_session_endpoint',
      'pushed_authorization_request_endpoint',
      'registration_endpoint',
      'introspection_endpoint',
      'dpop_signing_alg_values_supported',
    );
    expect(m.claims_supported).not.to.include('phone_number');
  });

  it('names the issuer from configuration, whatever Host the request carries', async () => {
    const res = await fetch(`${f.url}/.well-known/openid-configuration`, { headers: { host: 'evil.example' } });
    const body = (await res.json()) as Record<string, string>;
    expect(body.issuer).to.equal(f.issuer);
    expect(body.token_endpoint).to.equal(`${f.issuer}/token`);
  });

  it('signs the user in: code exchange, ID token against the JWKS, UserInfo with the dn42 claims', async () => {
    const tokens = await signIn(f, config, APP_REDIRECT, session);
    expect(tokens.token_type.toLowerCase()).to.equal('bearer');
    expect(tokens.expires_in).to.equal(3600);
    expect(tokens.refresh_token).to.be.a('string');
    expect(tokens.audience).to.equal(f.issuer);

    expect(decodeProtectedHeader(tokens.id_token!).alg).to.equal('EdDSA');
    const { payload } = await jwtVerify(tokens.id_token!, jwks(), { issuer: f.issuer, audience: app.client_id, algorithms: ['EdDSA'] });
    expect(payload.sub).to.equal(sub);
    expect(payload.exp! - payload.iat!).to.equal(3600);
    expect(payload).to.include({ preferred_username: `AS${GAMMA_ASN}`, auth_method: 'ssh', active_name: 'GAMMA-AS', active_person: 'GAMMA-DN42' });
    expect(payload.mnt_by).to.deep.equal([GAMMA_MNT]);
    expect(payload).not.to.have.any.keys('phone_number', 'phone_number_verified');

    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub);
    expect(info).to.deep.equal({
      sub,
      preferred_username: `AS${GAMMA_ASN}`,
      name: 'Gina Gamma',
      email: GAMMA_EMAIL,
      dn42: {
        asn: GAMMA_ASN,
        active_mnt: GAMMA_MNT,
        mnt: GAMMA_MNT,
        route: ['172.20.42.0/27'],
        route6: ['fd42:4242:10::/48'],
        timestamp: Math.floor(f.sys.clock.now().getTime() / 1000),
      },
    });
  });

  it('answers UserInfo by POST too, and from the registry as it is now', async () => {
    const tokens = await signIn(f, config, APP_REDIRECT, session);
    f.repo.put(
      'route',
      '172.20.42.32/27',
      rpsl([
        ['route', '172.20.42.32/27'],
        ['origin', `AS${GAMMA_ASN}`],
        ['mnt-by', GAMMA_MNT],
        ['source', 'DN42'],
      ]),
    );
    await f.sync();
    const res = await fetch(`${f.url}/userinfo`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ access_token: tokens.access_token }),
    });
    expect(res.status).to.equal(200);
    const info = (await res.json()) as { dn42: { route: string[] } };
    expect(info.dn42.route).to.have.members(['172.20.42.0/27', '172.20.42.32/27']);
    const byHeader = await fetch(`${f.url}/userinfo`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(byHeader.status).to.equal(200);
    expect(((await byHeader.json()) as { sub: string }).sub).to.equal(sub);
  });

  it('gives only the claims of the granted scopes', async () => {
    const tokens = await signIn(f, config, APP_REDIRECT, session, { scope: 'openid' });
    expect(await oidc.fetchUserInfo(config, tokens.access_token, sub)).to.deep.equal({ sub, preferred_username: `AS${GAMMA_ASN}` });
    const claims = tokens.claims()!;
    expect(claims).not.to.have.any.keys('dn42', 'mnt_by', 'auth_method', 'email', 'name');
    const email = await signIn(f, config, APP_REDIRECT, session, { scope: 'openid email' });
    expect(await oidc.fetchUserInfo(config, email.access_token, sub)).to.deep.equal({ sub, preferred_username: `AS${GAMMA_ASN}`, email: GAMMA_EMAIL });
    const profile = await signIn(f, config, APP_REDIRECT, session, { scope: 'openid profile' });
    expect(await oidc.fetchUserInfo(config, profile.access_token, sub)).to.deep.equal({ sub, preferred_username: `AS${GAMMA_ASN}`, name: 'Gina Gamma' });
    expect(profile.claims()).not.to.have.any.keys('dn42', 'mnt_by', 'auth_method', 'active_name', 'active_person', 'email');
  });

  it('authenticates a confidential client by client_secret_post, and refuses a wrong secret', async () => {
    const post = await rpConfig(f, app, 'post');
    expect((await signIn(f, post, APP_REDIRECT, session)).access_token).to.be.a('string');
    const pending = await authorizationUrl(config, APP_REDIRECT);
    const callback = await approveAsPage(f, pending.url, session);
    const form = { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: APP_REDIRECT, code_verifier: pending.verifier };
    const wrong = await tokenRequest(f, { ...app, client_secret: 'not-the-secret' }, form);
    expect(wrong.status).to.equal(401);
    expect(wrong.body.error).to.equal('invalid_client');
    // The stored digest is no secret either: presenting it is as wrong as any other value.
    const digest = (await f.sys.pool.query(`SELECT secret_sha256 FROM oauth_clients WHERE client_id = $1`, [app.client_id])).rows[0].secret_sha256;
    expect((await tokenRequest(f, { ...app, client_secret: digest }, form)).body.error).to.equal('invalid_client');
    expect((await tokenRequest(f, app, form)).status).to.equal(200);
  });

  it('lets a public client (auth none) in with PKCE alone, at a loopback redirect URI', async () => {
    const native = await registerClient(f, { redirect_uris: [NATIVE_REDIRECT], confidential: false, name: 'CLI' });
    expect(native).not.to.have.property('client_secret');
    const tokens = await signIn(f, await rpConfig(f, native, 'none'), NATIVE_REDIRECT, session);
    expect(tokens.claims()!.sub).to.equal(sub);
  });

  it('refuses a code without its verifier, at another redirect URI, or for another client', async () => {
    const pending = await authorizationUrl(config, APP_REDIRECT);
    const callback = await approveAsPage(f, pending.url, session);
    const form = { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: APP_REDIRECT, code_verifier: pending.verifier };
    const { code_verifier: _verifier, ...withoutVerifier } = form;
    expect((await tokenRequest(f, app, withoutVerifier)).body.error).to.equal('invalid_grant');
    expect((await tokenRequest(f, app, { ...form, redirect_uri: 'https://app.spec.example/other' })).body.error).to.equal('invalid_grant');
    const other = await registerClient(f, { redirect_uris: [APP_REDIRECT], confidential: true, name: 'Other' });
    expect((await tokenRequest(f, other, form)).body.error).to.equal('invalid_grant');
    // None of these spent the code.
    expect((await tokenRequest(f, app, form)).status).to.equal(200);
  });

  it('knows only the authorization_code and refresh_token grants', async () => {
    for (const grant_type of ['client_credentials', 'password', 'implicit', 'urn:ietf:params:oauth:grant-type:device_code']) {
      const res = await tokenRequest(f, app, { grant_type, username: 'x', password: 'y', device_code: 'z' });
      expect(res.status, grant_type).to.equal(400);
      expect(res.body.error, grant_type).to.equal('unsupported_grant_type');
    }
  });

  it('refuses a code redeemed with the wrong PKCE verifier', async () => {
    const pending = await authorizationUrl(config, APP_REDIRECT);
    const callback = await approveAsPage(f, pending.url, session);
    const res = await tokenRequest(f, app, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: APP_REDIRECT,
      code_verifier: oidc.randomPKCECodeVerifier(),
    });
    expect(res.status).to.equal(400);
    expect(res.body.error).to.equal('invalid_grant');
  });

  it('rotates the refresh token on every use; the old one is refused afterwards', async () => {
    const first = await signIn(f, config, APP_REDIRECT, session);
    const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
    expect(second.refresh_token).to.be.a('string').and.not.equal(first.refresh_token);
    expect(second.claims()!.sub).to.equal(sub);
    // The refreshed access token is again one for the issuer: echoed, and good at UserInfo.
    expect(second.audience).to.equal(f.issuer);
    expect((await oidc.fetchUserInfo(config, second.access_token, sub)).preferred_username).to.equal(`AS${GAMMA_ASN}`);
    const again = await tokenRequest(f, app, { grant_type: 'refresh_token', refresh_token: first.refresh_token! });
    expect(again).to.deep.include({ status: 400 });
    expect(again.body.error).to.equal('invalid_grant');
    // Reuse of a rotated token means it leaked: the whole chain is revoked.
    const chain = await tokenRequest(f, app, { grant_type: 'refresh_token', refresh_token: second.refresh_token! });
    expect(chain.body.error).to.equal('invalid_grant');
  });

  it('answers a replayed code with invalid_grant and revokes the refresh token it produced', async () => {
    const pending = await authorizationUrl(config, APP_REDIRECT);
    const callback = await approveAsPage(f, pending.url, session);
    const form = { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: APP_REDIRECT, code_verifier: pending.verifier };
    const first = await tokenRequest(f, app, form);
    expect(first.status).to.equal(200);
    // A refresh token rotated from the code's one is obtained from that code too.
    const rotated = await tokenRequest(f, app, { grant_type: 'refresh_token', refresh_token: String(first.body.refresh_token) });
    expect(rotated.status).to.equal(200);
    const replay = await tokenRequest(f, app, form);
    expect(replay.status).to.equal(400);
    expect(replay.body.error).to.equal('invalid_grant');
    const refresh = await tokenRequest(f, app, { grant_type: 'refresh_token', refresh_token: String(rotated.body.refresh_token) });
    expect(refresh.body.error).to.equal('invalid_grant');
    const info = await fetch(`${f.url}/userinfo`, { headers: { authorization: `Bearer ${first.body.access_token}` } });
    expect(info.status).to.equal(401);
  });

  it('issues an access token for a granted resource: a JWT with that audience, echoed as audience', async () => {
    const tokens = await signIn(f, config, APP_REDIRECT, session, { resource: [OIDC_RESOURCE], tokenResource: OIDC_RESOURCE });
    expect(tokens.audience).to.equal(OIDC_RESOURCE);
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks(), { issuer: f.issuer, audience: OIDC_RESOURCE, algorithms: ['EdDSA'] });
    expect(protectedHeader.typ).to.equal('at+jwt');
    expect(payload.sub).to.equal(sub);
    expect(payload.client_id).to.equal(app.client_id);
    expect(payload.exp! - payload.iat!).to.equal(3600);
    // A refresh asking for the resource again gets one for it, echoed as well.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, { resource: OIDC_RESOURCE });
    expect(refreshed.audience).to.equal(OIDC_RESOURCE);
    await jwtVerify(refreshed.access_token, jwks(), { issuer: f.issuer, audience: OIDC_RESOURCE, algorithms: ['EdDSA'] });
    // An access token for another audience is no good at UserInfo.
    const info = await fetch(`${f.url}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(info.status).to.equal(401);
    // Without `resource` at the token endpoint the same authorization gives a UserInfo token.
    const plain = await signIn(f, config, APP_REDIRECT, session, { resource: [OIDC_RESOURCE] });
    expect(plain.audience).to.equal(f.issuer);
  });

  it('refuses at the token endpoint a resource that was not approved', async () => {
    const err = await signIn(f, config, APP_REDIRECT, session, { tokenResource: OIDC_RESOURCE }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(oidc.ResponseBodyError);
    expect((err as oidc.ResponseBodyError).error).to.equal('invalid_target');
  });

  it('sends a denial back to the app as access_denied with its state', async () => {
    const pending = await authorizationUrl(config, APP_REDIRECT);
    const callback = await approveAsPage(f, pending.url, session, true);
    expect(`${callback.origin}${callback.pathname}`).to.equal(APP_REDIRECT);
    expect(Object.fromEntries(callback.searchParams)).to.deep.include({ error: 'access_denied', state: pending.state, iss: f.issuer });
    expect(callback.searchParams.has('code')).to.equal(false);
    const err = await oidc
      .authorizationCodeGrant(config, callback, { pkceCodeVerifier: pending.verifier, expectedState: pending.state })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(oidc.AuthorizationResponseError);
    expect((err as oidc.AuthorizationResponseError).error).to.equal('access_denied');
  });

  it('refuses a session JWT at /userinfo (audience separation)', async () => {
    const res = await fetch(`${f.url}/userinfo`, { headers: { authorization: `Bearer ${session}` } });
    expect(res.status).to.equal(401);
    expect(res.headers.get('www-authenticate')).to.match(/invalid_token/);
  });

  it('revokes the refresh tokens of an application when it is deregistered', async () => {
    const doomed = await registerClient(f, { redirect_uris: [APP_REDIRECT], confidential: true, name: 'Doomed' });
    const doomedConfig = await rpConfig(f, doomed);
    const tokens = await signIn(f, doomedConfig, APP_REDIRECT, session);
    const refreshed = await oidc.refreshTokenGrant(doomedConfig, tokens.refresh_token!);
    expect((await f.admin.delete(`/api/v1/admin/oauth-clients/${doomed.client_id}`)).status).to.equal(204);
    const { rows } = await f.sys.pool.query(`SELECT model FROM oidc_models WHERE client_id = $1`, [doomed.client_id]);
    expect(rows).to.deep.equal([]);
    const revoked = await f.sys.pool.query(
      `SELECT count(*)::int AS n FROM events WHERE type = 'OidcModelRevoked' AND data->>'model' = 'RefreshToken' AND data->>'reason' = 'client'`,
    );
    expect(revoked.rows[0].n).to.be.greaterThan(0);
    const res = await tokenRequest(f, doomed, { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token! });
    expect(res.status).to.equal(401);
    expect(res.body.error).to.equal('invalid_client');
  });

  it('lists every maintainer of the AS in mnt_by, the verified one as active_mnt', async () => {
    f.repo.put(
      'aut-num',
      `AS${GAMMA_ASN}`,
      rpsl([
        ['aut-num', `AS${GAMMA_ASN}`],
        ['as-name', 'GAMMA-AS'],
        ['admin-c', 'GAMMA-DN42'],
        ['mnt-by', GAMMA_MNT],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    );
    await f.sync();
    const tokens = await signIn(f, config, APP_REDIRECT, session);
    expect(tokens.claims()!.mnt_by).to.have.members([GAMMA_MNT, 'ALPHA-MNT']).and.have.length(2);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub);
    expect(info.dn42).to.deep.include({ asn: GAMMA_ASN, active_mnt: GAMMA_MNT });
  });

  it('names the maintainer in dn42.mnt too, the field the other dn42 providers use, in UserInfo and the ID token', async () => {
    const tokens = await signIn(f, config, APP_REDIRECT, session);
    expect((tokens.claims()!.dn42 as Record<string, unknown>).mnt).to.equal(GAMMA_MNT);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub);
    expect(info.dn42).to.deep.include({ mnt: GAMMA_MNT, active_mnt: GAMMA_MNT });
  });

  it('stops issuing tokens once the maintainer no longer maintains the AS (looked up live)', async () => {
    const tokens = await signIn(f, config, APP_REDIRECT, session);
    f.repo.put(
      'aut-num',
      `AS${GAMMA_ASN}`,
      rpsl([
        ['aut-num', `AS${GAMMA_ASN}`],
        ['as-name', 'GAMMA-AS'],
        ['admin-c', 'GAMMA-DN42'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    );
    await f.sync();
    const refresh = await tokenRequest(f, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! });
    expect(refresh.body.error).to.equal('invalid_grant');
    const info = await fetch(`${f.url}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(info.status).to.equal(401);
  });
});
