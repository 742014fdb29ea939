import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { SESSION_AUDIENCE } from '../../../commands/identity/sessions.js';
import { createIdentityApp } from '../../../http/identity/app.js';
import { ConfigError, loadConfig } from '../../../infra/config.js';
import { currentSigningKey, rotateSigningKeys } from '../../../infra/identity/keys.js';
import { api, expectResponse } from '../../support/http.js';
import { KEY_SECRET, grantFor, startIdentity, type IdentityFixture } from '../../support/identity.js';
import { startApp } from '../../support/system.js';

const run = promisify(execFile);

/** `dn42-control identity rotate-keys`, the real command line, against the fixture's database. */
async function rotateKeysCli(f: IdentityFixture): Promise<string> {
  const { stdout } = await run(process.execPath, ['cli/bin.mjs', 'identity', 'rotate-keys'], {
    env: { PATH: process.env.PATH, DATABASE_URL: f.sys.db.url, IDENTITY_ISSUER: f.issuer, IDENTITY_KEY_SECRET: KEY_SECRET, LOG_LEVEL: 'silent' },
    timeout: 60_000,
  });
  return stdout;
}

describe('Identity signing keys and JWKS', function () {
  this.timeout(90_000);
  let f: IdentityFixture;

  beforeEach(async () => {
    f = await startIdentity();
  });
  afterEach(async () => {
    await f?.close();
  });

  const jwks = async () => (await f.client.get('/.well-known/jwks.json')).body as JSONWebKeySet & { keys: Record<string, string>[] };
  const verify = async (token: string) =>
    jwtVerify(token, createLocalJWKSet(await jwks()), { algorithms: ['EdDSA'], issuer: f.issuer, audience: SESSION_AUDIENCE, currentDate: f.sys.clock.now() });

  it('publishes the signing key at the root as an OKP Ed25519 key, public parts only', async () => {
    const res = await f.client.get('/.well-known/jwks.json');
    expectResponse(res).status(200).header('cache-control', 'public, max-age=300');
    expect(res.body.keys).to.have.length(1);
    const [key] = res.body.keys;
    expect(key).to.have.all.keys('kty', 'crv', 'x', 'kid', 'alg', 'use');
    expect(key).to.include({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(Buffer.from(key.x, 'base64url')).to.have.length(32);
    const grant = await grantFor(f.sys, 'ALPHA-MNT', 4242420001);
    expect(decodeProtectedHeader(grant.token).kid).to.equal(key.kid);
    expectResponse(await f.client.get('/api/v1/.well-known/jwks.json')).status(404);
  });

  it('keeps verifying a token signed before rotate-keys, and signs new ones with the new key', async () => {
    const before = await grantFor(f.sys, 'ALPHA-MNT', 4242420001);
    const oldKid = decodeProtectedHeader(before.token).kid;
    const out = await rotateKeysCli(f);
    expect(out).to.match(/^signing key [\w-]+ added; published: [\w-]+, [\w-]+\n$/);

    const published = (await jwks()).keys.map((k) => k.kid);
    expect(published).to.have.length(2);
    expect(published[1]).to.equal(oldKid);
    expect((await verify(before.token)).payload.mnt).to.equal('ALPHA-MNT');
    expectResponse(await f.client.get('/api/v1/session', { token: before.token })).status(200);

    const after = await grantFor(f.sys, 'BETA-MNT', 4242420002);
    expect(decodeProtectedHeader(after.token).kid).to.equal(published[0]);
    expect((await verify(after.token)).payload.mnt).to.equal('BETA-MNT');
  });

  it('retires a superseded key only when its successor is older than the longest token lifetime', async () => {
    const t0 = f.sys.clock.now();
    const first = await grantFor(f.sys, 'ALPHA-MNT', 4242420001);
    const firstKid = decodeProtectedHeader(first.token).kid!;
    f.sys.clock.advance(3600_000);
    const second = await rotateSigningKeys(f.sys.pool, f.sys.config, f.sys.clock.now());
    expect(second.retired).to.deep.equal([]);
    // 2 h 5 min after the successor appeared the first key can have no live token left.
    f.sys.clock.current = new Date(t0.getTime() + 3600_000 + (2 * 3600 + 300) * 1000 - 1000);
    const middle = await rotateSigningKeys(f.sys.pool, f.sys.config, f.sys.clock.now());
    expect(middle.retired).to.deep.equal([]);
    f.sys.clock.advance(1000);
    const third = await rotateSigningKeys(f.sys.pool, f.sys.config, f.sys.clock.now());
    expect(third.retired).to.deep.equal([firstKid]);
    expect((await jwks()).keys.map((k) => k.kid)).to.deep.equal([third.added, middle.added, second.added]);
    const { rows } = await f.sys.pool.query(`SELECT private_key FROM identity_signing_keys WHERE kid = $1`, [firstKid]);
    expect(rows[0].private_key).to.equal(null);
  });

  it('stores private keys encrypted: another IDENTITY_KEY_SECRET cannot use them', async () => {
    const key = await currentSigningKey(f.sys.pool, f.sys.config, f.sys.clock.now());
    const seed = key.privateKey.export({ format: 'jwk' }).d!;
    const { rows } = await f.sys.pool.query(`SELECT private_key FROM identity_signing_keys WHERE kid = $1`, [key.kid]);
    expect((rows[0].private_key as Buffer).includes(Buffer.from(seed, 'base64url'))).to.equal(false);
    const other = { ...f.sys.config, identityKeySecret: 'another secret of enough length' };
    const failure = await currentSigningKey(f.sys.pool, other, f.sys.clock.now()).catch((err: unknown) => err);
    expect(failure).to.be.instanceOf(ConfigError).and.have.property('variable', 'IDENTITY_KEY_SECRET');
  });

  it('publishes the keys without opening them: an instance with another IDENTITY_KEY_SECRET serves the same set', async () => {
    const own = await f.client.get('/.well-known/jwks.json');
    expectResponse(own).status(200);
    const other = await startApp(createIdentityApp({ ...f.sys.context, config: { ...f.sys.config, identityKeySecret: 'another secret of enough length' } }));
    try {
      const res = await api(other.url).get('/.well-known/jwks.json');
      expectResponse(res).status(200).header('cache-control', 'public, max-age=300');
      expect(res.body).to.deep.equal(own.body);
    } finally {
      await other.close();
    }
  });

  it('refuses to start the identity app for a public issuer without IDENTITY_KEY_SECRET', () => {
    const config = loadConfig({ IDENTITY_ISSUER: 'https://id.example.net' });
    expect(() => createIdentityApp({ ...f.sys.context, config })).to.throw(ConfigError, /IDENTITY_KEY_SECRET: required/);
    expect(() => createIdentityApp({ ...f.sys.context, config: loadConfig({}) })).to.not.throw();
  });
});
