import { expect } from 'chai';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createIdentityApp } from '../../../../http/identity/app.js';
import { pruneOidcStorage } from '../../../../http/identity/oidc/prune.js';
import { sha256Hex } from '../../../../domain/sha256.js';
import { rotateSigningKeys } from '../../../../infra/identity/keys.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { useConfidentialApp } from './rp-support.js';

const REDIRECT = 'https://app.spec.example/callback';

/**
 * The provider's storage is the event store: grants, codes and tokens are
 * events on their own streams (never holding a token), read back through the
 * inline projection, so a second instance (or a restarted one) honours what the
 * first issued, single use holds under a race, expired rows are pruned, and a
 * signing-key rotation reaches the provider.
 */
describe('Identity OIDC storage: event-sourced, shared by instances', function () {
  this.timeout(120_000);
  const rp = useConfidentialApp(REDIRECT);

  describe('a second instance on the same database', () => {
    let second: TestSystem;
    let secondApp: { url: string; close(): Promise<void> };

    before(async () => {
      second = await createTestSystem({ database: rp.f.sys.db });
      secondApp = await startApp(createIdentityApp({ ...second.context, config: rp.f.sys.config }));
    });
    after(async () => {
      await secondApp?.close();
      await second?.close();
    });

    it('redeems a code the first one issued, and refreshes its tokens, with nothing in memory', async () => {
      const form = await rp.codeForm();
      const exchanged = await rp.token(form, secondApp.url);
      expect(exchanged.status).to.equal(200);
      // The first instance sees the code as consumed by the second.
      expect((await rp.token(form)).body.error).to.equal('invalid_grant');
      const fresh = await rp.signIn();
      const refreshed = await rp.token({ grant_type: 'refresh_token', refresh_token: fresh.refresh_token! }, secondApp.url);
      expect(refreshed.status).to.equal(200);
      const info = await fetch(`${secondApp.url}/userinfo`, { headers: { authorization: `Bearer ${fresh.access_token}` } });
      expect(info.status).to.equal(200);
    });

    it('keeps one exchange of a code when two instances race for it', async () => {
      const form = await rp.codeForm();
      const results = await Promise.all([rp.token(form), rp.token(form, secondApp.url), rp.token(form)]);
      const won = results.filter((r) => r.status === 200);
      expect(won).to.have.length(1);
      for (const lost of results.filter((r) => r.status !== 200)) expect(lost.body.error).to.equal('invalid_grant');
      // A replayed code revokes what the exchange produced.
      expect((await rp.token({ grant_type: 'refresh_token', refresh_token: won[0].body.refresh_token })).body.error).to.equal('invalid_grant');
    });
  });

  it('honours tokens after a rebuild of the projection from the events', async () => {
    const tokens = await rp.signIn();
    await rp.f.sys.projections.rebuild(['oidc']);
    const refreshed = await rp.token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token! });
    expect(refreshed.status).to.equal(200);
  });

  it('records grant, approval, code and tokens as events that never hold a token', async () => {
    const form = await rp.codeForm();
    const tokens = (await rp.token(form)).body;
    const streamsOf = async (prefix: string) =>
      (await rp.f.sys.pool.query(`SELECT stream_id, type, data, metadata FROM events WHERE stream_id LIKE $1 ORDER BY position`, [`${prefix}%`])).rows;
    const code = await streamsOf(`oidc-AuthorizationCode-${sha256Hex(form.code)}`);
    expect(code.map((e) => e.type)).to.deep.equal(['OidcModelStored', 'OidcModelConsumed']);
    expect(code[0].metadata.actor).to.equal('mntner:GAMMA-MNT');
    expect(code[1].metadata.actor).to.equal(`oauth-client:${rp.app.client_id}`);
    const grantId = code[0].data.payload.grantId as string;
    const approval = await streamsOf(`oidc-approval-${grantId}`);
    expect(approval[0].data).to.include({ client_id: rp.app.client_id, mntner: 'GAMMA-MNT', asn: 4242420010, method: 'ssh' });
    expect(await streamsOf(`oidc-Grant-${sha256Hex(grantId)}`)).to.have.length(1);
    expect(await streamsOf(`oidc-RefreshToken-${sha256Hex(tokens.refresh_token)}`)).to.have.length(1);
    expect(await streamsOf(`oidc-AccessToken-${sha256Hex(tokens.access_token)}`)).to.have.length(1);
    for (const secret of [form.code, tokens.access_token, tokens.refresh_token]) {
      const { rows } = await rp.f.sys.pool.query(`SELECT count(*)::int AS n FROM events WHERE data::text LIKE $1 OR stream_id LIKE $1`, [`%${secret}%`]);
      expect(rows[0].n, 'a token in the event store').to.equal(0);
      const stored = await rp.f.sys.pool.query(`SELECT count(*)::int AS n FROM oidc_models WHERE payload::text LIKE $1 OR key = $2`, [`%${secret}%`, secret]);
      expect(stored.rows[0].n, 'a token in the read model').to.equal(0);
    }
  });

  it('prunes rows a day after they expire, and keeps the live ones', async () => {
    const form = await rp.codeForm();
    const tokens = (await rp.token(form)).body;
    const rowOf = async (model: string, value: string) =>
      (await rp.f.sys.pool.query(`SELECT 1 FROM oidc_models WHERE model = $1 AND key = $2`, [model, sha256Hex(value)])).rowCount;
    // Just past the code's 120 s, plus the day of grace: the code goes, the 1 h access token stays.
    const pruned = await pruneOidcStorage(rp.f.sys.pool, new Date(Date.now() + (121 + 24 * 60 * 60) * 1000));
    expect(pruned).to.be.greaterThan(0);
    expect(await rowOf('AuthorizationCode', form.code)).to.equal(0);
    expect(await rowOf('AccessToken', tokens.access_token)).to.equal(1);
    expect(await rowOf('RefreshToken', tokens.refresh_token)).to.equal(1);
    expect((await rp.token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).status).to.equal(200);
  });

  it('signs with the new key after a rotation; ID tokens of the old key still verify', async () => {
    const before = await rp.signIn();
    const rotation = await rotateSigningKeys(rp.f.sys.pool, rp.f.sys.config, rp.f.sys.clock.now());
    const after = await rp.signIn();
    expect(decodeProtectedHeader(after.id_token!).kid).to.equal(rotation.added);
    expect(decodeProtectedHeader(before.id_token!).kid).not.to.equal(rotation.added);
    const jwks = createRemoteJWKSet(new URL(`${rp.f.issuer}/.well-known/jwks.json`));
    for (const t of [before, after]) await jwtVerify(t.id_token!, jwks, { issuer: rp.f.issuer, audience: rp.app.client_id, algorithms: ['EdDSA'] });
  });
});
