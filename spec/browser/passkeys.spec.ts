import { existsSync } from 'node:fs';
import { expect } from 'chai';
import { chromium, type Browser, type CDPSession, type Page } from 'playwright-core';
import { expectResponse } from '../support/http.js';
import { grantFor, startIdentity, type IdentityFixture } from '../support/identity.js';

const CHROMIUM = '/usr/bin/chromium';

/**
 * A real browser against the running identity service: Chromium's virtual
 * authenticator (CDP WebAuthn domain) creates a passkey with the options of
 * register/begin and signs the login/begin challenge. The page is any URL on the
 * service's origin (`http://localhost:<port>`, a secure context), so the
 * ceremonies run same-origin with relative paths, as the authorization page will.
 */
describe('Passkeys in a browser (Chromium virtual authenticator)', function () {
  this.timeout(120_000);
  let f: IdentityFixture;
  let browser: Browser;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.warn(`    skipped: ${CHROMIUM} is absent (CI installs Debian's chromium)`);
      this.skip();
    }
    f = await startIdentity();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
    page = await browser.newPage();
    cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    }));
    const res = await page.goto(`${f.issuer}/healthz`);
    expect(res?.status()).to.equal(200);
    expect(await page.evaluate(() => window.isSecureContext)).to.equal(true);
  });
  after(async () => {
    await browser?.close();
    await f?.close();
  });

  it('registers a passkey and logs in with it against the running service', async () => {
    const { token } = await grantFor(f.sys, 'ALPHA-MNT', 4242420001, 'ssh');

    const registered = await page.evaluate(async (session) => {
      const auth = { authorization: `Bearer ${session}`, 'content-type': 'application/json' };
      const begin = await (await fetch('/api/v1/passkeys/register/begin', { method: 'POST', headers: auth })).json();
      const created = (await navigator.credentials.create({
        publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(begin.options),
      })) as PublicKeyCredential;
      const credential = created.toJSON();
      const finish = await fetch('/api/v1/passkeys/register/finish', {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ ceremony_id: begin.ceremony_id, credential, label: 'virtual' }),
      });
      return { status: finish.status, body: await finish.json(), credential };
    }, token);
    expect(registered.status, JSON.stringify(registered.body)).to.equal(201);
    expect(registered.body).to.include({ credential_id: registered.credential.id, label: 'virtual', disabled: false });
    expect(registered.credential.response.transports).to.include('internal');
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).to.have.length(1);
    expect(credentials[0].isResidentCredential).to.equal(true);

    const login = await page.evaluate(async (asn) => {
      const json = { 'content-type': 'application/json' };
      const begin = await (await fetch('/api/v1/passkeys/login/begin', { method: 'POST', headers: json, body: JSON.stringify({ asn }) })).json();
      const asserted = (await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(begin.options) })) as PublicKeyCredential;
      const finish = await fetch('/api/v1/passkeys/login/finish', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ ceremony_id: begin.ceremony_id, credential: asserted.toJSON() }),
      });
      return { status: finish.status, body: await finish.json() };
    }, 4242420001);
    expect(login.status, JSON.stringify(login.body)).to.equal(200);
    expect(login.body).to.include({ asn: 4242420001, mntner: 'ALPHA-MNT', method: 'passkey' });

    const session = await f.client.get('/api/v1/session', { token: login.body.token });
    expectResponse(session).status(200).body({ asn: 4242420001, mntner: 'ALPHA-MNT', method: 'passkey' });
    const { credentials: after } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(after[0].signCount).to.be.greaterThan(credentials[0].signCount);
    const listed = (await f.client.get('/api/v1/passkeys', { token })).body.passkeys;
    expect(listed).to.have.length(1);
    expect(listed[0].last_used_at).to.be.a('string');
  });
});
