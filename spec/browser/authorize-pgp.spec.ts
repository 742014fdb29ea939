import { expect } from 'chai';
import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';
import { pgpSignCommand } from '../../web/authorize/commands.js';
import { PGP_KEY_NOT_FOUND } from '../../infra/identity/pgp.js';
import { authorizationUrl } from '../http/identity/oidc/rp-support.js';
import { subjectOf } from '../support/identity.js';
import { TestKeyserver } from '../support/keys.js';
import { GAMMA_ASN, GAMMA_MNT } from '../support/oidc.js';
import {
  expectFieldsLabelled,
  expectParamsPostedBack,
  focusedId,
  focusedText,
  landed,
  runAsShown,
  tabTo,
  useAuthorizePage,
  watchApprove,
} from './authorize-support.js';

/**
 * The PGP path of the authorization page in Chromium: the command the page
 * shows (`gpg --clearsign` of the nonce with the registered fingerprint) is run
 * by `sh` against a real GnuPG home, and its output is pasted back. The
 * registry holds only the fingerprint (no key-cert), so the service finds the
 * key on a loopback HKP key server, or, when that has none, asks for it (422)
 * and the page opens the public-key field. One test uses only the keyboard.
 * Each test has its own browser context and sets the key server itself.
 */
describe('Authorization page in a browser: PGP signature (Chromium, real gpg, loopback key server)', function () {
  this.timeout(180_000);
  const keyserver = new TestKeyserver();
  // Declared first, so the key server is up when the service is started with its URL.
  before(() => keyserver.start());
  const suite = useAuthorizePage({ env: () => ({ PGP_KEYSERVER_URL: keyserver.url }) });
  let page: Page;

  beforeEach(() => {
    keyserver.keys.clear();
    keyserver.requests.length = 0;
    page = suite.tab.page;
  });
  after(() => keyserver.close());

  /** The page's command for the nonce on screen, checked against the fingerprint, run in the fixture's GnuPG home. */
  async function signAsShown(): Promise<string> {
    const nonce = (await page.locator('#nonce').textContent())!;
    expect(nonce).to.match(new RegExp(`^AS${GAMMA_ASN}`));
    const command = (await page.locator('#command').textContent())!;
    expect(command).to.equal(pgpSignCommand(nonce, suite.f.pgpFingerprint));
    const signed = runAsShown(command, { GNUPGHOME: suite.f.gpg.dir });
    expect(signed).to.match(/^-----BEGIN PGP SIGNED MESSAGE-----\n/);
    return signed;
  }

  it('is operable with the keyboard alone: AS number, the PGP option, the pasted clearsigned nonce, "Not now", Allow; the key comes from the key server', async () => {
    keyserver.keys.set(suite.f.pgpFingerprint, suite.f.gpg.exportPublic(suite.f.pgpFingerprint));
    const watch = watchApprove(page);
    const pending = await authorizationUrl(suite.config, suite.rp.redirectUri);
    await page.goto(pending.url.href);

    await page.getByRole('heading', { name: 'Sign in to Gamma Looking Glass' }).waitFor();
    expect(await focusedId(page), 'the AS number field has focus').to.equal('asn');
    await page.keyboard.type(`AS${GAMMA_ASN}`);
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { name: `Verify AS${GAMMA_ASN} (GAMMA-AS)` }).waitFor({ timeout: 60_000 });
    expect(await focusedId(page), 'the first method has focus').to.match(/^option-/);
    if (!/Sign with the PGP key/.test((await focusedText(page)) ?? '')) await tabTo(page, /Sign with the PGP key/);
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { name: 'Sign with your PGP key' }).waitFor();
    expect(await focusedId(page), 'a new screen without a first field focuses its heading').to.equal('heading');
    expect(await expectFieldsLabelled(page)).to.deep.equal(['Signed message', 'Public key (ASCII armored)']);
    const signed = await signAsShown();
    // The command's box (it scrolls sideways on a narrow screen), its Copy button, then the field.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).to.equal('Command to run');
    await page.keyboard.press('Tab');
    expect(await focusedText(page)).to.equal('Copy the command');
    await page.keyboard.press('Tab');
    expect(await focusedId(page)).to.equal('answer');
    await page.keyboard.insertText(signed);
    await tabTo(page, /^Verify$/);
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { name: 'Save a passkey?' }).waitFor();
    await tabTo(page, /^Not now$/);
    await page.keyboard.press('Enter');

    await page.getByRole('heading', { name: 'Allow Gamma Looking Glass to sign you in?' }).waitFor();
    expect(await focusedText(page)).to.equal('Allow');
    await page.keyboard.press('Enter');

    const callback = await landed(page, suite.rp.redirectUri);
    expect(callback.searchParams.get('state')).to.equal(pending.state);
    expectParamsPostedBack(watch, false);
    expect(keyserver.requests).to.deep.equal([`/pks/lookup?op=get&options=mr&search=0x${suite.f.pgpFingerprint}`]);
    const tokens = await oidc.authorizationCodeGrant(suite.config, callback, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
    });
    expect(tokens.claims()).to.include({ sub: subjectOf(GAMMA_MNT, GAMMA_ASN), auth_method: 'pgp' });
  });

  it('refuses a signature over other text, then, with the key found nowhere (422), opens the public key field and verifies with the key pasted there', async () => {
    const pending = await authorizationUrl(suite.config, suite.rp.redirectUri);
    await page.goto(pending.url.href);
    await page.getByLabel('AS number').fill(String(GAMMA_ASN));
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: /Sign with the PGP key/ }).click();
    await page.getByRole('heading', { name: 'Sign with your PGP key' }).waitFor();
    const error = page.locator('#error[role="alert"]');

    await page.getByLabel('Signed message').fill(suite.f.gpg.clearsign(suite.f.pgpFingerprint, 'some other text'));
    await page.getByRole('button', { name: 'Verify' }).click();
    await error.waitFor();
    expect(await error.textContent()).to.equal('wrong answer: the signed text is not the challenge nonce');
    expect(await focusedId(page)).to.equal('error');
    expect(await page.getByLabel('Signed message').getAttribute('aria-invalid')).to.equal('true');
    expect(await page.locator('details').getAttribute('open'), 'the key field stays closed').to.equal(null);

    await page.getByLabel('Signed message').fill(await signAsShown());
    await page.getByRole('button', { name: 'Verify' }).click();
    await error.filter({ hasText: PGP_KEY_NOT_FOUND }).waitFor();
    expect(await focusedId(page), 'the new error takes focus').to.equal('error');
    expect(await page.locator('details').getAttribute('open'), 'the key field opens').to.equal('');
    expect(await page.getByLabel('Signed message').getAttribute('aria-invalid'), 'the signature is not what was wrong').to.equal(null);
    expect(await page.getByLabel('Public key (ASCII armored)').getAttribute('aria-describedby')).to.equal('public_key-hint error');
    expect(keyserver.requests, 'the key server was asked').to.have.length(1);

    await page.getByLabel('Public key (ASCII armored)').fill(suite.f.gpg.exportPublic(suite.f.pgpFingerprint));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Save a passkey?' }).waitFor();
    await page.getByRole('button', { name: 'Not now' }).click();
    await page.getByRole('button', { name: 'Allow' }).click();
    const callback = await landed(page, suite.rp.redirectUri);
    const tokens = await oidc.authorizationCodeGrant(suite.config, callback, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
    });
    expect(tokens.claims()).to.include({ sub: subjectOf(GAMMA_MNT, GAMMA_ASN), auth_method: 'pgp' });
  });
});
