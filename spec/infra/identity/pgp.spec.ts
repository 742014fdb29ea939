import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRegistryApp } from '../../../http/registry/app.js';
import { loadConfig } from '../../../infra/config.js';
import { migrate } from '../../../infra/db/migrate.js';
import { fetchFromKeyserver, keyserverBase } from '../../../infra/identity/keyserver.js';
import { PGP_KEY_NOT_FOUND, verifyPgpAnswer, type PgpVerdict } from '../../../infra/identity/pgp.js';
import { createLogger } from '../../../infra/logger.js';
import { registryMigrations } from '../../../infra/registry/store.js';
import { api, expectResponse } from '../../support/http.js';
import { closedUrl, GpgHome, TestKeyserver } from '../../support/keys.js';
import { RegistryRepo, registryEnv, rpsl, spaced, writeBaseRegistry } from '../../support/registry.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';

const TOKEN = 'registry-service-token-for-specs';
const NONCE = 'AS4242420001-4c1e2b7d9a0f48e3b6c5d4e3f2a1b0c9';
const log = createLogger('silent');

/** A key-cert object as the registry writes it: the armored key in `certif:` lines, blank lines as empty values. */
function keyCertObject(fingerprint: string, armored: string): string {
  return rpsl([
    ['key-cert', `PGPKEY-${fingerprint.slice(-8)}`],
    ['method', 'PGP'],
    ['owner', 'Spec <spec@example.net>'],
    ['fingerpr', spaced(fingerprint)],
    ...armored
      .trim()
      .split('\n')
      .map((line) => ['certif', line] as const),
    ['mnt-by', 'ALPHA-MNT'],
    ['source', 'DN42'],
  ]);
}

function expectVerdict(verdict: PgpVerdict, status: number, detail?: RegExp): void {
  expect(verdict.ok, JSON.stringify(verdict)).to.equal(false);
  if (verdict.ok) return;
  expect(verdict.status).to.equal(status);
  if (detail) expect(verdict.detail).to.match(detail);
}

describe('PGP clearsigned answers', function () {
  this.timeout(60_000);
  const gpg = new GpgHome();
  const keyserver = new TestKeyserver();
  let repo: RegistryRepo;
  let sys: TestSystem;
  let registryUrl: string;
  let closeRegistry: () => Promise<void>;
  /** In the registry as a key-cert. */
  let registered: string;
  /** Only on the key server. */
  let published: string;
  /** Nowhere: the answer has to bring it. */
  let unpublished: string;
  /** A certify-only primary key that signs with its subkey; in the registry. */
  let withSubkey: string;
  /** In the registry with an armor that is no key at all. */
  let brokenCopy: string;

  const config = (env: Record<string, string> = {}) =>
    loadConfig({ REGISTRY_URL: registryUrl, REGISTRY_SERVICE_TOKEN: TOKEN, PGP_KEYSERVER_URL: keyserver.url, LOG_LEVEL: 'silent', ...env });

  const check = (input: { clearsigned: string; fingerprint: string; publicKey?: string; nonce?: string }, env?: Record<string, string>) =>
    verifyPgpAnswer({ config: config(env), log }, { nonce: NONCE, ...input });

  before(async () => {
    registered = gpg.generate('Registered <registered@example.net>');
    published = gpg.generate('Published <published@example.net>');
    unpublished = gpg.generate('Unpublished <unpublished@example.net>', 'rsa3072');
    withSubkey = gpg.generateWithSigningSubkey('Subkey <subkey@example.net>');
    brokenCopy = gpg.generate('Broken <broken@example.net>');

    repo = writeBaseRegistry(new RegistryRepo());
    repo.put('key-cert', `PGPKEY-${registered.slice(-8)}`, keyCertObject(registered, gpg.exportPublic(registered)));
    repo.put('key-cert', `PGPKEY-${withSubkey.slice(-8)}`, keyCertObject(withSubkey, gpg.exportPublic(withSubkey)));
    repo.put(
      'key-cert',
      `PGPKEY-${brokenCopy.slice(-8)}`,
      keyCertObject(brokenCopy, '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nbm90IGEga2V5\n=AAAA\n-----END PGP PUBLIC KEY BLOCK-----'),
    );
    repo.commit('key-certs');
    sys = await createTestSystem({ env: registryEnv(repo.dir, { REGISTRY_SERVICE_TOKEN: TOKEN }) });
    await migrate(sys.pool, [registryMigrations]);
    const started = await startApp(createRegistryApp(sys.context));
    registryUrl = started.url;
    closeRegistry = started.close;
    expectResponse(await api(registryUrl, { token: TOKEN }).post('/registry/v1/sync'))
      .status(200)
      .body({ synced: true });

    keyserver.keys.set(published, gpg.exportPublic(published));
    await keyserver.start();
  });
  after(async () => {
    await keyserver.close();
    await closeRegistry?.();
    await sys?.close();
    repo?.destroy();
    gpg.destroy();
  });
  beforeEach(() => {
    keyserver.requests.length = 0;
  });

  describe('key sources, in the contract order', () => {
    it('verifies with the registry key-cert, read back through the replica, without asking the key server', async () => {
      const verdict = await check({ clearsigned: gpg.clearsign(registered, NONCE), fingerprint: registered });
      expect(verdict).to.deep.equal({ ok: true, fingerprint: registered, keySource: 'registry' });
      expect(keyserver.requests).to.deep.equal([]);
    });

    it('accepts the registered fingerprint in lower case and with spaces', async () => {
      const verdict = await check({ clearsigned: gpg.clearsign(registered, NONCE), fingerprint: spaced(registered).toLowerCase() });
      expect(verdict).to.deep.equal({ ok: true, fingerprint: registered, keySource: 'registry' });
    });

    it('verifies with the key server when the registry has no key-cert, asking by exact fingerprint', async () => {
      const verdict = await check({ clearsigned: gpg.clearsign(published, NONCE), fingerprint: published });
      expect(verdict).to.deep.equal({ ok: true, fingerprint: published, keySource: 'keyserver' });
      expect(keyserver.requests).to.deep.equal([`/pks/lookup?op=get&options=mr&search=0x${published}`]);
    });

    it('verifies with the public_key of the request when neither has the key', async () => {
      const verdict = await check({ clearsigned: gpg.clearsign(unpublished, NONCE), fingerprint: unpublished, publicKey: gpg.exportPublic(unpublished) });
      expect(verdict).to.deep.equal({ ok: true, fingerprint: unpublished, keySource: 'request' });
      expect(keyserver.requests).to.have.length(1);
    });

    it('answers 422 asking for the key when no source has it', async () => {
      const verdict = await check({ clearsigned: gpg.clearsign(unpublished, NONCE), fingerprint: unpublished });
      expectVerdict(verdict, 422);
      expect(verdict).to.deep.equal({ ok: false, status: 422, detail: PGP_KEY_NOT_FOUND });
      expect(PGP_KEY_NOT_FOUND).to.match(/public_key/);
    });

    it('skips an unreachable key server silently', async () => {
      const env = { PGP_KEYSERVER_URL: await closedUrl() };
      const withKey = await check({ clearsigned: gpg.clearsign(unpublished, NONCE), fingerprint: unpublished, publicKey: gpg.exportPublic(unpublished) }, env);
      expect(withKey).to.deep.equal({ ok: true, fingerprint: unpublished, keySource: 'request' });
      expectVerdict(await check({ clearsigned: gpg.clearsign(published, NONCE), fingerprint: published }, env), 422);
    });

    it('skips an unreachable registry replica the same way', async () => {
      const env = { REGISTRY_URL: await closedUrl() };
      const verdict = await check({ clearsigned: gpg.clearsign(registered, NONCE), fingerprint: registered, publicKey: gpg.exportPublic(registered) }, env);
      expect(verdict).to.deep.equal({ ok: true, fingerprint: registered, keySource: 'request' });
    });

    it('asks no key server when none is configured', async () => {
      const verdict = await check({ clearsigned: gpg.clearsign(published, NONCE), fingerprint: published }, { PGP_KEYSERVER_URL: '' });
      expectVerdict(verdict, 422);
      expect(keyserver.requests).to.deep.equal([]);
    });

    it('does not take a key the key server returns for another fingerprint', async () => {
      const asked = 'CD'.repeat(20);
      keyserver.keys.set(asked, gpg.exportPublic(published));
      try {
        const verdict = await check({ clearsigned: gpg.clearsign(published, NONCE), fingerprint: asked });
        expectVerdict(verdict, 400, new RegExp(`key server has fingerprint ${published}, not the registered ${asked}`));
      } finally {
        keyserver.keys.delete(asked);
      }
    });

    it('falls through to the request key when the registry copy cannot be read', async () => {
      const clearsigned = gpg.clearsign(brokenCopy, NONCE);
      expectVerdict(await check({ clearsigned, fingerprint: brokenCopy }), 400, /registry key-cert could not be read/);
      const verdict = await check({ clearsigned, fingerprint: brokenCopy, publicKey: gpg.exportPublic(brokenCopy) });
      expect(verdict).to.deep.equal({ ok: true, fingerprint: brokenCopy, keySource: 'request' });
    });
  });

  describe('the four checks', () => {
    it('accepts a signature made by a signing subkey bound to the registered primary key', async () => {
      const verdict = await check({ clearsigned: gpg.clearsign(withSubkey, NONCE), fingerprint: withSubkey });
      expect(verdict).to.deep.equal({ ok: true, fingerprint: withSubkey, keySource: 'registry' });
    });

    it('refuses a signed text that is not the nonce (400)', async () => {
      expectVerdict(await check({ clearsigned: gpg.clearsign(registered, `${NONCE}0`), fingerprint: registered }), 400, /not the challenge nonce/);
      expectVerdict(await check({ clearsigned: gpg.clearsign(registered, `AS4242420002 ${NONCE}`), fingerprint: registered }), 400, /not the challenge nonce/);
    });

    it('accepts the nonce with a trailing newline, trailing blanks and CRLF line ends', async () => {
      const clearsigned = gpg.clearsign(registered, `${NONCE}  \n`).replace(/\n/g, '\r\n');
      expect((await check({ clearsigned, fingerprint: registered })).ok).to.equal(true);
    });

    it('refuses a supplied key whose fingerprint is not the registered one (400)', async () => {
      // The answer brings the signer's own key, but the option registers a fingerprint no source holds.
      const verdict = await check({ clearsigned: gpg.clearsign(unpublished, NONCE), fingerprint: 'AB'.repeat(20), publicKey: gpg.exportPublic(unpublished) });
      expectVerdict(verdict, 400, new RegExp(`fingerprint ${unpublished}, not the registered ${'AB'.repeat(20)}`));
    });

    it('refuses a signature by another key than the registered one (400)', async () => {
      const verdict = await check({ clearsigned: gpg.clearsign(published, NONCE), fingerprint: registered, publicKey: gpg.exportPublic(published) });
      expectVerdict(verdict, 400, new RegExp(`not signed by key ${registered}`));
    });

    it('refuses a clearsigned text altered after signing (400)', async () => {
      const clearsigned = gpg.clearsign(registered, NONCE);
      const altered = `${NONCE.slice(0, -1)}f`;
      const verdict = await check({ clearsigned: clearsigned.replace(NONCE, altered), fingerprint: registered, nonce: altered });
      expectVerdict(verdict, 400, /signature does not verify/);
    });

    it('refuses an answer that is not clearsigned (400)', async () => {
      expectVerdict(await check({ clearsigned: NONCE, fingerprint: registered }), 400, /not a PGP clearsigned message/);
      const detached = gpg.gpg(['--local-user', registered, '--armor', '--detach-sign'], NONCE);
      expectVerdict(await check({ clearsigned: detached, fingerprint: registered }), 400, /not a PGP clearsigned message/);
    });

    it('refuses a private key sent as public_key (400), never using it', async () => {
      const verdict = await check({ clearsigned: gpg.clearsign(unpublished, NONCE), fingerprint: unpublished, publicKey: gpg.exportSecret(unpublished) });
      expectVerdict(verdict, 400, /private key/);
    });
  });

  describe('the key server client', () => {
    let hanging: Server;
    let hangingUrl: string;

    before(async () => {
      hanging = createServer(() => undefined);
      await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
      hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
    });
    after(async () => {
      hanging.closeAllConnections();
      await new Promise<void>((resolve) => hanging.close(() => resolve()));
    });

    it('gives up on a key server that does not answer within the timeout', async () => {
      const started = Date.now();
      expect(await fetchFromKeyserver(hangingUrl, published, log, 300)).to.equal(null);
      expect(Date.now() - started).to.be.below(2000);
    });

    it('answers null for a fingerprint the server does not hold, and the key for one it does', async () => {
      expect(await fetchFromKeyserver(keyserver.url, unpublished, log)).to.equal(null);
      expect(await fetchFromKeyserver(keyserver.url, published, log)).to.match(/BEGIN PGP PUBLIC KEY BLOCK/);
    });

    it('maps hkps and hkp URLs to https and the HKP port', () => {
      expect(keyserverBase('hkps://keys.openpgp.org').href).to.equal('https://keys.openpgp.org/');
      expect(keyserverBase('hkp://keyserver.example').href).to.equal('http://keyserver.example:11371/');
      expect(keyserverBase('hkp://keyserver.example:8080').href).to.equal('http://keyserver.example:8080/');
    });
  });
});
