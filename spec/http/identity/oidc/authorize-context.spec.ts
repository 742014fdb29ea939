import { createHash, randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { createIdentityApp } from '../../../../http/identity/app.js';
import { api, expectResponse, type ApiResponse } from '../../../support/http.js';
import { mintSession } from '../../../support/identity.js';
import { OIDC_RESOURCE, registerClient, sshSession, startOidc, type OidcFixture, type RegisteredClient } from '../../../support/oidc.js';
import { startApp } from '../../../support/system.js';

const REDIRECT = 'https://app.spec.example/callback';
const CONTEXT = '/api/v1/oauth/authorize-context';
const APPROVE = '/api/v1/oauth/approve';
const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');

/**
 * authorize-context's three results and every rule of `/authorize`, and approve,
 * which checks the posted-back request again. A faulty request goes back to the
 * app only once its redirect URI is verified; otherwise the answer is fatal.
 */
describe('Identity OIDC authorize-context and approve', function () {
  this.timeout(120_000);
  let f: OidcFixture;
  let app: RegisteredClient;
  let session: string;

  /** A valid request, with `changes` applied (undefined removes a parameter); `extra` appended as is. */
  const query = (changes: Record<string, string | undefined> = {}, extra = ''): string => {
    const params: Record<string, string | undefined> = {
      response_type: 'code',
      client_id: app.client_id,
      redirect_uri: REDIRECT,
      scope: 'openid profile',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'state-123',
      nonce: 'nonce-456',
      ...changes,
    };
    const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
    return q.toString() + extra;
  };
  const context = (q: string) => f.client.get(`${CONTEXT}?${q}`);

  /** A 200 that sends the error to the app: `{redirect_to, error, detail}` with state and issuer in the address. */
  function expectRedirectError(res: ApiResponse, error: string, state: string | null = 'state-123'): URL {
    expectResponse(res).status(200);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.body).to.have.all.keys('redirect_to', 'error', 'detail');
    expect(res.body.error).to.equal(error);
    const to = new URL(res.body.redirect_to);
    expect(`${to.origin}${to.pathname}`).to.equal(REDIRECT);
    expect(to.searchParams.get('error')).to.equal(error);
    expect(to.searchParams.get('error_description')).to.equal(res.body.detail);
    expect(to.searchParams.get('state')).to.equal(state);
    expect(to.searchParams.get('iss')).to.equal(f.issuer);
    return to;
  }

  function expectFatal(res: ApiResponse, error: string): void {
    expectResponse(res).status(400);
    expect(res.headers.get('cache-control')).to.equal('no-store');
    expect(res.body).to.deep.include({ error, fatal: true });
    expect(res.body.detail).to.be.a('string');
    expect(res.body).not.to.have.property('redirect_to');
  }

  before(async () => {
    f = await startOidc();
    app = await registerClient(f, { redirect_uris: [REDIRECT, 'http://localhost:9000/cb'], confidential: true, name: 'Gamma Looking Glass' });
    session = (await sshSession(f)).token;
  });
  after(async () => {
    await f?.done();
  });

  describe('GET authorize-context', () => {
    it('answers a valid request with the client, the scopes, the normalised params and the captcha, never cached', async () => {
      const res = await context(
        query(
          { scope: 'openid dn42 offline_access openid email' },
          `&resource=${encodeURIComponent(OIDC_RESOURCE)}&resource=${encodeURIComponent(OIDC_RESOURCE)}`,
        ),
      );
      expectResponse(res).status(200);
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(res.body).to.have.all.keys('client', 'scopes', 'params', 'captcha');
      expect(res.body.client).to.deep.equal({ name: 'Gamma Looking Glass' });
      expect(res.body.scopes.map((s: { id: string }) => s.id)).to.deep.equal(['openid', 'email', 'dn42']);
      for (const s of res.body.scopes) expect(s.description).to.be.a('string').and.not.equal(s.id);
      expect(res.body.params).to.deep.equal({
        client_id: app.client_id,
        redirect_uri: REDIRECT,
        response_type: 'code',
        scope: 'openid email dn42',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 'state-123',
        nonce: 'nonce-456',
        resource: [OIDC_RESOURCE],
      });
      expect(res.body.captcha).to.deep.equal({ kind: 'pow', endpoint: '/api/v1/captcha/challenge' });
    });

    it('tells the page which captcha the service runs (none here)', async () => {
      const open = await startApp(createIdentityApp({ ...f.sys.context, config: { ...f.sys.config, captchaKind: 'none' } }));
      try {
        const res = await api(open.url).get(`${CONTEXT}?${query()}`);
        expect(res.body.captcha).to.deep.equal({ kind: 'none', endpoint: null });
      } finally {
        await open.close();
      }
    });

    it('is fatal for an unknown client_id', async () => {
      expectFatal(await context(query({ client_id: 'no-such-client' })), 'invalid_client');
      expectFatal(await context(query({ client_id: undefined })), 'invalid_client');
    });

    it('is fatal for a redirect_uri the client did not register, exactly', async () => {
      expectFatal(await context(query({ redirect_uri: 'https://evil.example/callback' })), 'invalid_redirect_uri');
      expectFatal(await context(query({ redirect_uri: `${REDIRECT}/` })), 'invalid_redirect_uri');
      expectFatal(await context(query({ redirect_uri: 'http://localhost:9001/cb' })), 'invalid_redirect_uri');
      expectFatal(await context(query({ redirect_uri: undefined })), 'invalid_redirect_uri');
      expectFatal(await context(query({}, `&redirect_uri=${encodeURIComponent(REDIRECT)}`)), 'invalid_redirect_uri');
    });

    it('sends a missing PKCE challenge back as invalid_request', async () => {
      expectRedirectError(await context(query({ code_challenge: undefined, code_challenge_method: undefined })), 'invalid_request');
      expectRedirectError(await context(query({ code_challenge: undefined })), 'invalid_request');
    });

    it('sends plain PKCE back as invalid_request, and a challenge without method (which means plain)', async () => {
      const plain = await context(query({ code_challenge_method: 'plain', code_challenge: 'a'.repeat(43) }));
      expectRedirectError(plain, 'invalid_request');
      expect(plain.body.detail).to.match(/S256/);
      expectRedirectError(await context(query({ code_challenge_method: undefined })), 'invalid_request');
      expectRedirectError(await context(query({ code_challenge: 'too-short' })), 'invalid_request');
    });

    it('sends a scope without openid back as invalid_scope', async () => {
      expectRedirectError(await context(query({ scope: 'profile email' })), 'invalid_scope');
      expectRedirectError(await context(query({ scope: undefined })), 'invalid_scope');
    });

    it('sends a resource outside the allow-list back as invalid_target', async () => {
      const res = await context(query({}, `&resource=${encodeURIComponent(OIDC_RESOURCE)}&resource=${encodeURIComponent('https://other.example/')}`));
      expectRedirectError(res, 'invalid_target');
      expect(res.body.detail).to.include('https://other.example/');
    });

    it('sends other response types, repeated parameters, prompt=none and request objects back', async () => {
      expectRedirectError(await context(query({ response_type: 'token' })), 'unsupported_response_type');
      expectRedirectError(await context(query({ response_type: undefined })), 'invalid_request');
      expectRedirectError(await context(query({}, '&scope=openid')), 'invalid_request');
      expectRedirectError(await context(query({ prompt: 'none' })), 'login_required');
      expectRedirectError(await context(query({ response_mode: 'form_post' })), 'invalid_request');
      expectRedirectError(await context(query({ request: 'eyJ.x.y' })), 'request_not_supported');
      expectRedirectError(await context(query({ state: undefined, scope: 'email' })), 'invalid_scope', null);
    });

    it("keeps the provider's own authorization endpoint out of reach: /authorize never answers with a code", async () => {
      for (const path of [`/authorize?${query()}`, `/auth?${query()}`]) {
        const res = await f.client.get(path);
        expect(res.headers.get('location'), path).to.equal(null);
        expect(res.text, path).not.to.match(/code=/);
      }
      for (const path of ['/auth', '/request', '/session/end', '/token/introspection', '/token/revocation', '/reg', '/device/auth', '/jwks']) {
        expect((await f.client.post(path, {})).status, path).to.equal(404);
      }
    });
  });

  describe('POST approve', () => {
    const paramsOf = async (q = query()) => {
      const res = await context(q);
      expectResponse(res).status(200);
      return res.body.params as Record<string, unknown>;
    };

    it('answers {redirect_to} with a code, the state and the issuer', async () => {
      const res = await f.client.post(APPROVE, { ...(await paramsOf()), deny: false }, { token: session });
      expectResponse(res).status(200);
      expect(res.body).to.have.all.keys('redirect_to');
      expect(res.headers.get('cache-control')).to.equal('no-store');
      const to = new URL(res.body.redirect_to);
      expect(`${to.origin}${to.pathname}`).to.equal(REDIRECT);
      expect(to.searchParams.get('code')).to.match(/^[\w-]{30,}$/);
      expect(to.searchParams.get('state')).to.equal('state-123');
      expect(to.searchParams.get('iss')).to.equal(f.issuer);
    });

    it('answers a denial with error=access_denied and the state, and issues no code', async () => {
      const res = await f.client.post(APPROVE, { ...(await paramsOf()), deny: true }, { token: session });
      expectResponse(res).status(200);
      const to = new URL(res.body.redirect_to);
      expect(to.searchParams.get('error')).to.equal('access_denied');
      expect(to.searchParams.get('state')).to.equal('state-123');
      expect(to.searchParams.has('code')).to.equal(false);
    });

    it('wants a session token', async () => {
      const params = await paramsOf();
      expectResponse(await f.client.post(APPROVE, { ...params, deny: false })).status(401);
      expectResponse(await f.client.post(APPROVE, { ...params, deny: false }, { token: 'not-a-jwt' })).status(401);
    });

    it('checks the params again: a changed redirect_uri is fatal, a dropped openid goes back as invalid_scope', async () => {
      const params = await paramsOf();
      expectFatal(
        await f.client.post(APPROVE, { ...params, redirect_uri: 'https://evil.example/callback', deny: false }, { token: session }),
        'invalid_redirect_uri',
      );
      expectFatal(await f.client.post(APPROVE, { ...params, client_id: 'forged', deny: false }, { token: session }), 'invalid_client');
      expectRedirectError(await f.client.post(APPROVE, { ...params, scope: 'profile', deny: false }, { token: session }), 'invalid_scope');
      expectRedirectError(await f.client.post(APPROVE, { ...params, resource: ['https://other.example/'], deny: false }, { token: session }), 'invalid_target');
    });

    it('refuses fields the page never received (422) and a session that names no maintainer (400)', async () => {
      const params = await paramsOf();
      expectResponse(await f.client.post(APPROVE, { ...params, deny: false, prompt: 'none' }, { token: session })).status(422);
      expectResponse(await f.client.post(APPROVE, { ...params }, { token: session })).status(422);
      const anonymous = await mintSession(f.sys, { asn: 4242420010, method: 'ssh', sub: 'x'.repeat(64) });
      const res = await f.client.post(APPROVE, { ...params, deny: false }, { token: anonymous });
      expectResponse(res).status(400);
      expect(res.body.fatal).to.equal(false);
    });

    it('is fatal once the application is deregistered', async () => {
      const gone = await registerClient(f, { redirect_uris: [REDIRECT] });
      const params = await paramsOf(query({ client_id: gone.client_id }));
      expectResponse(await f.admin.delete(`/api/v1/admin/oauth-clients/${gone.client_id}`)).status(204);
      expectFatal(await f.client.post(APPROVE, { ...params, deny: false }, { token: session }), 'invalid_client');
    });
  });
});
