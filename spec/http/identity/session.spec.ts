import { createHash, generateKeyPairSync } from 'node:crypto';
import { expect } from 'chai';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import { SESSION_AUDIENCE, subjectOf, type SessionGrant } from '../../../commands/identity/sessions.js';
import { expectResponse } from '../../support/http.js';
import { grantFor, mintSession, startIdentity, type IdentityFixture } from '../../support/identity.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('Identity session tokens', function () {
  this.timeout(60_000);
  let f: IdentityFixture;
  let grant: SessionGrant;

  before(async () => {
    f = await startIdentity();
    grant = await grantFor(f.sys, 'ALPHA-MNT', 4242420001, 'pgp');
  });
  after(async () => {
    await f?.close();
  });

  it('answers GET /session with the identity the token names', async () => {
    const res = await f.client.get('/api/v1/session', { token: grant.token });
    expectResponse(res).status(200);
    expect(res.body).to.deep.equal({
      asn: 4242420001,
      mntner: 'ALPHA-MNT',
      method: 'pgp',
      sub: createHash('sha256').update('ALPHA-MNT/4242420001').digest('hex'),
      expires_at: new Date(f.sys.clock.now().getTime() + 2 * 3600_000).toISOString(),
    });
    expect(grant.expires_at).to.equal(res.body.expires_at);
  });

  it('describes the session, passkey and key-set routes in the OpenAPI document', async () => {
    const doc = (await f.client.get('/api/v1/openapi.json')).body;
    expect(doc.paths).to.include.keys(
      '/api/v1/session',
      '/api/v1/passkeys',
      '/api/v1/passkeys/{credential_id}',
      '/api/v1/passkeys/register/begin',
      '/api/v1/passkeys/login/finish',
      '/.well-known/jwks.json',
    );
    expect(doc.paths['/api/v1/session'].get.security).to.deep.equal([{ session: [] }]);
    expect(doc.components.securitySchemes.session).to.include({ type: 'http', scheme: 'bearer' });
  });

  it('signs with EdDSA and the contract claims; only the jti and the sha256 are stored', async () => {
    const header = decodeProtectedHeader(grant.token);
    expect(header.alg).to.equal('EdDSA');
    const claims = decodeJwt(grant.token);
    expect(claims).to.include({
      sub: subjectOf('ALPHA-MNT', 4242420001),
      asn: 4242420001,
      mnt: 'ALPHA-MNT',
      method: 'pgp',
      iss: f.issuer,
      aud: SESSION_AUDIENCE,
    });
    expect(claims.exp! - claims.iat!).to.equal(7200);
    expect(claims.iat).to.equal(Math.floor(f.sys.clock.now().getTime() / 1000));
    const events = await f.sys.store.readStream(`session-${claims.jti}`);
    expect(events.map((e) => e.type)).to.deep.equal(['SessionIssued']);
    expect(events[0].data).to.include({ jti: claims.jti, token_sha256: createHash('sha256').update(grant.token).digest('hex') });
    const { rows } = await f.sys.pool.query(`SELECT count(*)::int AS n FROM events WHERE data::text LIKE '%' || $1 || '%'`, [grant.token.split('.')[2]]);
    expect(rows[0].n).to.equal(0);
  });

  it('refuses a missing, malformed or expired token with 401 and a Bearer challenge', async () => {
    const missing = await f.client.get('/api/v1/session');
    // RFC 6750 §3.1: no credentials, no error code in the challenge; the body's code is the 401's.
    expectResponse(missing)
      .status(401)
      .body({ detail: 'session token required', error: 'invalid_token', fatal: false })
      .header('www-authenticate', 'Bearer realm="dn42-identity"');
    expectResponse(await f.client.get('/api/v1/session', { headers: { authorization: 'Basic dXNlcjpwYXNz' } }))
      .status(401)
      .header('www-authenticate', 'Bearer realm="dn42-identity"');
    expectResponse(await f.client.get('/api/v1/session', { token: 'abc' }))
      .status(401)
      .body({ detail: 'invalid or expired session token', error: 'invalid_token', fatal: false })
      .header('www-authenticate', 'Bearer realm="dn42-identity", error="invalid_token"');
    const early = await grantFor(f.sys, 'BETA-MNT', 4242420002);
    f.sys.clock.advance(2 * 3600_000 - 1000);
    expectResponse(await f.client.get('/api/v1/session', { token: early.token })).status(200);
    f.sys.clock.advance(1000);
    expectResponse(await f.client.get('/api/v1/session', { token: early.token }))
      .status(401)
      .detail('invalid or expired session token');
    f.sys.clock.advance(-2 * 3600_000);
  });

  it('refuses alg none and HS256 tokens, the header algorithm is never trusted', async () => {
    const real = decodeProtectedHeader(grant.token);
    const claims = decodeJwt(grant.token);
    const none = `${b64({ alg: 'none', typ: 'JWT', kid: real.kid })}.${b64(claims)}.`;
    const hs256 = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: real.kid })
      .sign(new TextEncoder().encode('a shared secret of 32 bytes!!!!!'));
    // Key confusion: HMAC keyed with the published public key.
    const jwks = (await f.client.get('/.well-known/jwks.json')).body.keys as { kid: string; x: string }[];
    const publicX = Buffer.from(jwks.find((k) => k.kid === real.kid)!.x, 'base64url');
    const confused = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: real.kid }).sign(publicX);
    for (const token of [none, hs256, confused]) {
      expectResponse(await f.client.get('/api/v1/session', { token }))
        .status(401)
        .detail('invalid or expired session token');
    }
  });

  it('refuses a token of a foreign key, issuer or audience, or with changed claims', async () => {
    const real = decodeProtectedHeader(grant.token);
    const claims = decodeJwt(grant.token);
    const foreign = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: real.kid }).sign(generateKeyPairSync('ed25519').privateKey);
    const [h, , s] = grant.token.split('.');
    const changed = `${h}.${b64({ ...claims, asn: 4242420002 })}.${s}`;
    const ok = { sub: subjectOf('ALPHA-MNT', 4242420001), asn: 4242420001, mnt: 'ALPHA-MNT', method: 'ssh' };
    const tokens = {
      foreign,
      changed,
      issuer: await mintSession(f.sys, ok, { issuer: 'https://elsewhere.example' }),
      // An access token's audience is the issuer: not a session.
      audience: await mintSession(f.sys, ok, { audience: f.issuer }),
      subject: await mintSession(f.sys, { ...ok, sub: subjectOf('BETA-MNT', 4242420001) }),
      method: await mintSession(f.sys, { ...ok, method: 'password' }),
    };
    expectResponse(await f.client.get('/api/v1/session', { token: await mintSession(f.sys, ok) })).status(200);
    for (const [name, token] of Object.entries(tokens)) {
      const res = await f.client.get('/api/v1/session', { token });
      expect(res.status, name).to.equal(401);
    }
  });
});
