import { expect } from 'chai';
import { createIdentityApp } from '../../../../http/identity/app.js';
import { sha256Hex } from '../../../../domain/sha256.js';
import { api, expectResponse } from '../../../support/http.js';
import { OIDC_ADMIN_TOKEN, registerClient, sshSession, startOidc, type OidcFixture } from '../../../support/oidc.js';
import { approveAsPage, authorizationUrl, rpConfig, signIn, tokenRequest } from './rp-support.js';
import { startApp } from '../../../support/system.js';

const CLIENTS = '/api/v1/admin/oauth-clients';

/**
 * Administration of the identity service: OAuth applications and the registry
 * sync trigger behind IDENTITY_ADMIN_TOKEN (403 when none is configured), the
 * public registry status, and /healthz.
 */
describe('Identity administration: OAuth applications, registry sync and status', function () {
  this.timeout(120_000);
  let f: OidcFixture;

  before(async () => {
    f = await startOidc();
  });
  after(async () => {
    await f?.done();
  });

  describe('the admin token', () => {
    it('answers 403 everywhere when IDENTITY_ADMIN_TOKEN is not configured (fails closed)', async () => {
      const closed = await startApp(createIdentityApp({ ...f.sys.context, config: { ...f.sys.config, identityAdminToken: undefined } }));
      try {
        const client = api(closed.url, { token: OIDC_ADMIN_TOKEN });
        for (const res of [
          await client.post(CLIENTS, { name: 'x', redirect_uris: ['https://x.example/cb'], confidential: false }),
          await client.get(CLIENTS),
          await client.delete(`${CLIENTS}/anything`),
          await client.post('/api/v1/registry/sync'),
        ]) {
          expectResponse(res).status(403);
          expect(res.body).to.deep.include({ error: 'access_denied', fatal: false });
        }
      } finally {
        await closed.close();
      }
    });

    it('answers 401 without a bearer token or with a wrong one', async () => {
      const missing = await f.client.get(CLIENTS);
      expectResponse(missing).status(401);
      expect(missing.headers.get('www-authenticate')).to.match(/^Bearer/);
      expectResponse(await f.client.get(CLIENTS, { token: 'wrong-admin-token-of-some-length' })).status(401);
      expectResponse(await f.client.post('/api/v1/registry/sync', undefined, { token: 'wrong-admin-token-of-some-length' })).status(401);
      // One character short is as wrong as anything else.
      expectResponse(await f.client.get(CLIENTS, { token: OIDC_ADMIN_TOKEN.slice(1) })).status(401);
    });
  });

  describe('OAuth applications', () => {
    it('accepts https redirect URIs, and plain http only for loopback', async () => {
      const ok = await registerClient(f, {
        redirect_uris: ['https://app.example/cb', 'http://127.0.0.1:8000/cb', 'http://[::1]:8000/cb', 'http://localhost/cb'],
      });
      expect(ok.redirect_uris).to.have.length(4);
      for (const bad of [
        'http://app.example/cb',
        'ftp://app.example/cb',
        'com.example.app:/cb',
        'https://app.example/cb#frag',
        'https://user:pw@app.example/cb',
        '/relative/cb',
      ]) {
        const res = await f.admin.post(CLIENTS, { name: 'Bad', redirect_uris: ['https://fine.example/cb', bad], confidential: false });
        expectResponse(res).status(422);
        expect(res.body.detail[0].loc).to.deep.equal(['body', 'redirect_uris', 1]);
        expect(res.body.detail[0].msg).to.include(`invalid redirect_uri ${bad}`);
      }
      expectResponse(await f.admin.post(CLIENTS, { name: 'None', redirect_uris: [], confidential: false })).status(422);
      expectResponse(
        await f.admin.post(CLIENTS, { name: 'Twice', redirect_uris: ['https://a.example/cb', 'https://a.example/cb'], confidential: false }),
      ).status(422);
      expectResponse(await f.admin.post(CLIENTS, { name: 'No flag', redirect_uris: ['https://a.example/cb'] })).status(422);
    });

    it('shows a confidential client its secret once and keeps only its sha256', async () => {
      const app = await registerClient(f, { redirect_uris: ['https://secret.example/cb'], confidential: true, name: 'Secretive' });
      expect(app.client_secret).to.be.a('string').with.length.greaterThan(40);
      const list = await f.admin.get(CLIENTS);
      expectResponse(list).status(200);
      const listed = list.body.clients.find((c: { client_id: string }) => c.client_id === app.client_id);
      expect(listed).to.deep.equal({ client_id: app.client_id, name: 'Secretive', redirect_uris: ['https://secret.example/cb'], confidential: true });
      expect(list.text).not.to.include(app.client_secret);
      const { rows } = await f.sys.pool.query(`SELECT data FROM events WHERE stream_id = $1`, [`oauth-client-${app.client_id}`]);
      expect(rows[0].data.secret_sha256).to.equal(sha256Hex(app.client_secret!));
      const leaks = await f.sys.pool.query(`SELECT count(*)::int AS n FROM events WHERE data::text LIKE $1`, [`%${app.client_secret}%`]);
      expect(leaks.rows[0].n).to.equal(0);
    });

    it('gives a public client no secret', async () => {
      const app = await registerClient(f, { redirect_uris: ['https://public.example/cb'], confidential: false });
      expect(app).not.to.have.property('client_secret');
      expect(app.confidential).to.equal(false);
    });

    it('deregisters an application once: it leaves the list, a second time is 404', async () => {
      const app = await registerClient(f, { redirect_uris: ['https://bye.example/cb'] });
      expectResponse(await f.admin.delete(`${CLIENTS}/${app.client_id}`)).status(204);
      const list = await f.admin.get(CLIENTS);
      expect(list.body.clients.map((c: { client_id: string }) => c.client_id)).not.to.include(app.client_id);
      const again = await f.admin.delete(`${CLIENTS}/${app.client_id}`);
      expectResponse(again).status(404).detail(`unknown oauth client ${app.client_id}`);
      expectResponse(await f.admin.delete(`${CLIENTS}/never-registered`))
        .status(404)
        .detail('unknown oauth client never-registered');
    });
  });

  describe('registry', () => {
    it('shows the replica status without authentication: commit, counts, sync time, nothing else', async () => {
      const res = await f.client.get('/api/v1/registry/status');
      expectResponse(res).status(200);
      expect(res.body).to.have.all.keys('enabled', 'commit', 'synced_at', 'counts', 'detail');
      expect(res.body.detail).to.equal(null);
      expect(res.body.commit).to.equal(f.repo.git('rev-parse', 'HEAD').trim());
      expect(res.body.counts['aut-num']).to.be.greaterThan(0);
      expect(new Date(res.body.synced_at).getTime()).to.be.greaterThan(0);
    });

    it('triggers one replica sync with the admin token', async () => {
      const unchanged = await f.admin.post('/api/v1/registry/sync');
      expectResponse(unchanged).status(200);
      expect(unchanged.body.synced).to.equal(false);
      const commit = f.repo.commit('one more');
      const synced = await f.admin.post('/api/v1/registry/sync');
      expectResponse(synced).status(200);
      expect(synced.body).to.include({ synced: true, commit });
      expect((await f.client.get('/api/v1/registry/status')).body.commit).to.equal(commit);
    });

    it('answers 503 for the status when the replica does not answer', async () => {
      const orphan = await startApp(createIdentityApp({ ...f.sys.context, config: { ...f.sys.config, registryUrl: 'http://127.0.0.1:1' } }));
      try {
        expectResponse(await api(orphan.url).get('/api/v1/registry/status')).status(503);
      } finally {
        await orphan.close();
      }
    });
  });

  it('answers 503 temporarily_unavailable at UserInfo and the token endpoint while the replica does not answer', async () => {
    const app = await registerClient(f, { redirect_uris: ['https://live.example/cb'], confidential: true });
    const tokens = await signIn(f, await rpConfig(f, app), 'https://live.example/cb', (await sshSession(f)).token);
    const orphan = await startApp(createIdentityApp({ ...f.sys.context, config: { ...f.sys.config, registryUrl: 'http://127.0.0.1:1' } }));
    try {
      const info = await fetch(`${orphan.url}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(info.status).to.equal(503);
      expect(((await info.json()) as { error: string }).error).to.equal('temporarily_unavailable');
      const refresh = await tokenRequest(f, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, orphan.url);
      expect(refresh).to.deep.include({ status: 503 });
    } finally {
      await orphan.close();
    }
    // The refused refresh did not rotate the token: it still works once the replica answers.
    expect((await tokenRequest(f, app, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! })).status).to.equal(200);
  });

  it('keeps a code unused when the replica is down at its exchange, so the app can retry', async () => {
    const app = await registerClient(f, { redirect_uris: ['https://retry.example/cb'], confidential: true });
    const pending = await authorizationUrl(await rpConfig(f, app), 'https://retry.example/cb');
    const callback = await approveAsPage(f, pending.url, (await sshSession(f)).token);
    const form = {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code')!,
      redirect_uri: 'https://retry.example/cb',
      code_verifier: pending.verifier,
    };
    const orphan = await startApp(createIdentityApp({ ...f.sys.context, config: { ...f.sys.config, registryUrl: 'http://127.0.0.1:1' } }));
    try {
      const down = await tokenRequest(f, app, form, orphan.url);
      expect(down.status).to.equal(503);
      expect(down.body.error).to.equal('temporarily_unavailable');
    } finally {
      await orphan.close();
    }
    const consumed = await f.sys.pool.query(`SELECT count(*)::int AS n FROM events WHERE stream_id = $1 AND type = 'OidcModelConsumed'`, [
      `oidc-AuthorizationCode-${sha256Hex(form.code)}`,
    ]);
    expect(consumed.rows[0].n, 'the code was consumed by the failed exchange').to.equal(0);
    const retry = await tokenRequest(f, app, form);
    expect(retry.status).to.equal(200);
    expect(retry.body.access_token).to.be.a('string');
    // Still single use: the retry consumed it.
    expect((await tokenRequest(f, app, form)).body.error).to.equal('invalid_grant');
  });

  it('answers /healthz with the database state', async () => {
    const res = await f.client.get('/healthz');
    expectResponse(res).status(200);
    expect(res.body).to.deep.equal({ status: 'ok', database: 'up' });
  });
});
