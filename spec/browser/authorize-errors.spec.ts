import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { CHALLENGE_EXPIRED, TERMINAL_DETAIL, TOO_MANY_ATTEMPTS } from '../../domain/identity/decide.js';
import { AUTHORIZATION_LAPSED } from '../../commands/identity/passkeys.js';
import { unknownAsn } from '../../commands/identity/verification.js';
import { INSECURE_CONTEXT } from '../../web/authorize/model.js';
import { PGP_UNAVAILABLE } from '../../infra/identity/pgp.js';
import { authorizationUrl } from '../http/identity/oidc/rp-support.js';
import { powTicket } from '../http/identity/verification-support.js';
import { expectResponse } from '../support/http.js';
import { GAMMA_ASN } from '../support/oidc.js';
import { rpsl } from '../support/registry.js';
import { enrolGammaPasskey, focusedId, tabTo, useAuthorizePage } from './authorize-support.js';

/** A host name Chromium resolves to loopback but does not count as potentially trustworthy (not `localhost`). */
const INSECURE_HOST = 'insecure.test';

/**
 * Refusals of the real service as the page shows them in Chromium: the
 * contract's detail word for word in the alert, which takes focus, on the screen
 * the contract's rule leads to (a new challenge needed → the methods), and the
 * way on from there. The service's test clock is moved for the expiry and the
 * re-send; the registry is changed (and put back) for a lapsed passkey. Each test
 * has its own browser context and starts with GAMMA-MNT holding no passkey.
 */
describe('Authorization page in a browser: refusals of the service and where they leave the user', function () {
  this.timeout(180_000);
  const suite = useAuthorizePage({ chromiumArgs: [`--host-resolver-rules=MAP ${INSECURE_HOST} 127.0.0.1`] });
  let page: Page;

  beforeEach(() => {
    page = suite.tab.page;
  });

  const authorizeUrl = async () => (await authorizationUrl(suite.config, suite.rp.redirectUri)).url;
  const alert = () => page.locator('#error[role="alert"]');

  async function enterAsn(text: string): Promise<void> {
    await page.goto((await authorizeUrl()).href);
    await page.getByLabel('AS number').fill(text);
    await page.keyboard.press('Enter');
  }

  /** From the AS number to the SSH answer screen; returns the option's id. */
  async function toSshAnswer(): Promise<string> {
    await enterAsn(`AS${GAMMA_ASN}`);
    const option = page.getByRole('button', { name: /Sign with the SSH key/ });
    const id = (await option.getAttribute('id'))!.replace(/^option-/, '');
    await option.click();
    await page.getByRole('heading', { name: 'Sign with your SSH key' }).waitFor();
    return id;
  }

  /** Pastes `answer`, presses Verify and waits for the service's answer to be rendered. */
  async function submit(answer: string): Promise<void> {
    await page.getByLabel('Signature').fill(answer);
    await Promise.all([page.waitForResponse('**/api/v1/challenge/submit'), page.getByRole('button', { name: 'Verify' }).click()]);
    // The busy screen (aria-busy) is replaced once the answer is settled.
    await page.locator('#screen > section:not([aria-busy])').waitFor();
  }

  const nonce = async () => (await page.locator('#nonce').textContent())!;

  it('an AS number the registry does not know: the detail on the field, which is marked invalid; corrected with the keyboard', async () => {
    await enterAsn('AS4242429999');
    await alert().waitFor();
    expect(await alert().textContent()).to.equal(unknownAsn(4242429999));
    expect(await focusedId(page)).to.equal('error');
    const field = page.getByLabel('AS number');
    expect(await field.getAttribute('aria-invalid')).to.equal('true');
    expect(await field.getAttribute('aria-describedby')).to.equal('asn-hint error');
    expect(await field.inputValue(), 'what was typed stays').to.equal('AS4242429999');

    await page.keyboard.press('Tab');
    expect(await focusedId(page), 'the field follows the error').to.equal('asn');
    await page.keyboard.press('Control+A');
    await page.keyboard.type(String(GAMMA_ASN));
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `Verify AS${GAMMA_ASN} (GAMMA-AS)` }).waitFor();
    expect(await alert().count()).to.equal(0);
  });

  it('the fifth wrong signature (429): back to the methods with the detail, and a new challenge can be asked for', async () => {
    await toSshAnswer();
    for (let i = 1; i <= 4; i++) {
      await submit(suite.f.ssh.sign(`not the nonce ${i}`));
      expect(await alert().textContent(), `attempt ${i}`).to.match(/does not verify/);
      expect(await page.getByRole('heading', { name: 'Sign with your SSH key' }).count()).to.equal(1);
    }
    await submit(suite.f.ssh.sign('not the nonce 5'));
    await page.getByRole('heading', { name: `Verify AS${GAMMA_ASN} (GAMMA-AS)` }).waitFor();
    expect(await alert().textContent()).to.equal(TOO_MANY_ATTEMPTS);
    expect(await focusedId(page)).to.equal('error');
    await page.getByRole('button', { name: /Sign with the SSH key/ }).click();
    await page.getByRole('heading', { name: 'Sign with your SSH key' }).waitFor();
    expect(await alert().count()).to.equal(0);
  });

  it('an expired challenge (410): back to the methods with the detail; the next challenge verifies', async () => {
    await toSshAnswer();
    const first = await nonce();
    suite.f.sys.clock.advance(16 * 60_000);
    await submit(suite.f.ssh.sign(first));
    await page.getByRole('heading', { name: `Verify AS${GAMMA_ASN} (GAMMA-AS)` }).waitFor();
    expect(await alert().textContent()).to.equal(CHALLENGE_EXPIRED);
    expect(await focusedId(page)).to.equal('error');

    await page.getByRole('button', { name: /Sign with the SSH key/ }).click();
    await page.getByRole('heading', { name: 'Sign with your SSH key' }).waitFor();
    const second = await nonce();
    expect(second).not.to.equal(first);
    await submit(suite.f.ssh.sign(second));
    await page.getByRole('heading', { name: 'Save a passkey?' }).waitFor();
  });

  it('a challenge superseded by a newer one (409): back to the methods with the detail', async () => {
    const optionId = await toSshAnswer();
    const first = await nonce();
    // Past the re-send cooldown, a new challenge of the same option (from elsewhere) supersedes the one on screen.
    suite.f.sys.clock.advance(61_000);
    const newer = await suite.f.client.post('/api/v1/challenge', { asn: GAMMA_ASN, option_id: optionId, captcha_token: await powTicket(suite.f.client) });
    expectResponse(newer).status(201);
    expect(newer.body.nonce).not.to.equal(first);
    await submit(suite.f.ssh.sign(first));
    await page.getByRole('heading', { name: `Verify AS${GAMMA_ASN} (GAMMA-AS)` }).waitFor();
    expect(await alert().textContent()).to.equal(TERMINAL_DETAIL.Superseded);
    expect(await focusedId(page)).to.equal('error');
  });

  it('a submit the service cannot judge now (503): the detail and "Try again", reached by keyboard, repeats the same answer', async () => {
    await toSshAnswer();
    await page.route(
      '**/api/v1/challenge/submit',
      (route) =>
        route.fulfill({
          status: 503,
          contentType: 'application/json',
          body: JSON.stringify({ detail: PGP_UNAVAILABLE, error: 'temporarily_unavailable', fatal: false }),
        }),
      { times: 1 },
    );
    await submit(suite.f.ssh.sign(await nonce()));
    expect(await alert().textContent()).to.equal(PGP_UNAVAILABLE);
    expect(await focusedId(page)).to.equal('error');
    expect(await page.getByLabel('Signature').getAttribute('aria-invalid'), "an outage is not the answer's fault").to.equal(null);
    await tabTo(page, /^Try again$/);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Save a passkey?' }).waitFor();
  });

  it('a passkey whose maintainer lost the AS between begin and finish (403): the detail on the offer, and another method still works', async () => {
    await enrolGammaPasskey(suite.f, suite.tab);
    await enterAsn(`AS${GAMMA_ASN}`);
    await page.getByRole('heading', { name: `Log in to AS${GAMMA_ASN}` }).waitFor();
    const autNum = (mntBy: string) =>
      rpsl([
        ['aut-num', `AS${GAMMA_ASN}`],
        ['as-name', 'GAMMA-AS'],
        ['admin-c', 'GAMMA-DN42'],
        ['mnt-by', mntBy],
        ['source', 'DN42'],
      ]);
    suite.f.repo.put('aut-num', `AS${GAMMA_ASN}`, autNum('ALPHA-MNT'));
    await suite.f.sync();
    try {
      await page.getByRole('button', { name: 'Use passkey' }).click();
      await alert().waitFor();
      expect(await alert().textContent()).to.equal(AUTHORIZATION_LAPSED);
      expect(await focusedId(page)).to.equal('error');
      expect(await page.getByRole('heading', { name: `Log in to AS${GAMMA_ASN}` }).count(), 'still on the offer').to.equal(1);
    } finally {
      suite.f.repo.put('aut-num', `AS${GAMMA_ASN}`, autNum('GAMMA-MNT'));
      await suite.f.sync();
    }
    await page.getByRole('button', { name: 'Use another method' }).click();
    await page.getByRole('heading', { name: `Verify AS${GAMMA_ASN} (GAMMA-AS)` }).waitFor();
  });

  it('outside a secure context: the terminal screen, no call to the service, nothing that leads anywhere', async () => {
    const url = await authorizeUrl();
    const insecure = new URL(`${url.pathname}${url.search}`, `http://${INSECURE_HOST}:${new URL(suite.f.issuer).port}`);
    const requests: string[] = [];
    page.on('request', (req) => requests.push(req.url()));
    await page.goto(insecure.href);
    await page.getByRole('heading', { name: 'This sign-in request cannot continue' }).waitFor();
    expect(await page.evaluate(() => window.isSecureContext)).to.equal(false);
    expect(await alert().textContent()).to.equal(INSECURE_CONTEXT);
    expect(await focusedId(page)).to.equal('error');
    // Barrier: a request the page sends now is reported after every request it sent before.
    await page.evaluate(() => fetch('/spec-barrier').catch(() => undefined));
    expect(requests.at(-1)).to.match(/\/spec-barrier$/);
    expect(
      requests.filter((r) => r.includes('/api/')),
      'no API call',
    ).to.deep.equal([]);
    expect(await page.locator('#screen a, #screen button').count()).to.equal(0);
    expect(page.url()).to.equal(insecure.href);
    expect(suite.rp.arrivals).to.deep.equal([]);
  });
});
