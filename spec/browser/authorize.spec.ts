import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';
import { NETWORK_FAILURE } from '../../web/authorize/problem.js';
import { authorizationUrl } from '../http/identity/oidc/rp-support.js';
import { GAMMA_EMAIL } from '../http/identity/verification-support.js';
import { subjectOf } from '../support/identity.js';
import { eventually } from '../support/wait.js';
import { SCREENSHOTS } from './console-support.js';
import { GAMMA_ASN, GAMMA_MNT } from '../support/oidc.js';
import {
  enrolGammaPasskey,
  expectFieldsLabelled,
  expectParamsPostedBack,
  focusedId,
  focusedText,
  landed as landedOn,
  runAsShown,
  useAuthorizePage,
  watchApprove,
} from './authorize-support.js';

/**
 * The authorization page in a real browser against the real provider: Chromium
 * opens `/authorize?...` of a registered client the way an application sends the
 * user there, the user verifies inside the page (an SSH signature made by
 * `ssh-keygen` from the command the page shows and pasted back, an e-mailed code,
 * or a passkey of Chromium's virtual authenticator), consents, and the browser
 * lands on the client's redirect URI with `code` and `state`, which openid-client
 * redeems. Each test has its own browser context and authenticator and starts
 * with GAMMA-MNT holding no passkey; a test that logs in with one enrols it first
 * (through the API), so the tests do not depend on their order.
 */
describe('Authorization page in a browser (Chromium, real provider)', function () {
  this.timeout(180_000);
  const suite = useAuthorizePage();
  let page: Page;
  let home: string;

  before(() => {
    home = homeWithKey(suite.f.ssh.path);
  });
  beforeEach(() => {
    page = suite.tab.page;
  });
  after(() => {
    if (home) rmSync(home, { recursive: true, force: true });
  });

  /** Opens the page for a fresh authorization request of the client, as the application would send the user. */
  async function open(options: { scope?: string } = {}) {
    const pending = await authorizationUrl(suite.config, suite.rp.redirectUri, options);
    expect(pending.url.pathname).to.equal('/authorize');
    await page.goto(pending.url.href);
    return pending;
  }

  async function enterAsn(text: string) {
    await page.getByRole('heading', { name: 'Sign in to Gamma Looking Glass' }).waitFor();
    await page.getByLabel('AS number').fill(text);
    await page.keyboard.press('Enter');
  }

  const landed = () => landedOn(page, suite.rp.redirectUri);

  it('verifies with an SSH signature pasted into the page, enrols a passkey, consents, and lands on the redirect URI with code and state', async () => {
    const watch = watchApprove(page);
    const problems = consoleProblems(page);
    const pending = await open();
    await page.getByRole('heading', { name: 'Sign in to Gamma Looking Glass' }).waitFor();
    expect(await expectFieldsLabelled(page)).to.deep.equal(['AS number']);
    await enterAsn('AS4242420010');
    // No passkey used in this browser: the page goes to the options (its proof of work solved in the browser)
    // without asking login/begin, whose 404 the browser would log as a failed request.
    await page.getByRole('heading', { name: `Verify AS${GAMMA_ASN} (GAMMA-AS)` }).waitFor({ timeout: 60_000 });
    expect(await page.locator('#error').count()).to.equal(0);
    expect(problems(), 'console errors and passkey lookups up to the options').to.deep.equal([]);
    expect(await page.getByRole('button', { name: 'Use a passkey' }).isVisible(), 'a passkey can still be asked for').to.equal(true);
    await page.getByRole('button', { name: /Sign with the SSH key ssh-ed25519/ }).click();

    await page.getByRole('heading', { name: 'Sign with your SSH key' }).waitFor();
    const command = await page.locator('#command').textContent();
    const nonce = (await page.locator('#nonce').textContent())!;
    expect(nonce).to.match(new RegExp(`^AS${GAMMA_ASN}`));
    expect(command).to.equal(`printf '%s' '${nonce}' | ssh-keygen -Y sign -n dn42-autopeer -f ~/.ssh/id_ed25519`);
    expect(await expectFieldsLabelled(page)).to.deep.equal(['Signature']);

    // A signature over other text is refused; the contract's detail is announced and takes focus.
    await page.getByLabel('Signature').fill(suite.f.ssh.sign('some other text'));
    await page.getByRole('button', { name: 'Verify' }).click();
    const error = page.locator('#error[role="alert"]');
    await error.waitFor();
    expect(await error.textContent()).to.match(/does not verify/);
    expect(await focusedId(page)).to.equal('error');
    expect(await page.getByLabel('Signature').getAttribute('aria-invalid')).to.equal('true');

    // The command exactly as shown, run by a shell in a home holding the registered key.
    const signature = runAsShown(command!, { HOME: home });
    await page.getByLabel('Signature').fill(signature);
    await page.getByRole('button', { name: 'Verify' }).click();

    await page.getByRole('heading', { name: 'Save a passkey?' }).waitFor();
    expect(await expectFieldsLabelled(page)).to.deep.equal(['Name for this passkey (optional)']);
    await page.getByLabel('Name for this passkey (optional)').fill('spec laptop');
    await page.getByRole('button', { name: 'Save passkey' }).click();
    await page.getByRole('heading', { name: 'Allow Gamma Looking Glass to sign you in?' }).waitFor();
    expect(await page.locator('#status').textContent()).to.match(/Passkey saved/);
    // The browser now knows this AS has a passkey: the next visit offers it at once.
    expect(await page.evaluate(() => localStorage.getItem('dn42.passkey-asns'))).to.equal(JSON.stringify([GAMMA_ASN]));
    const { credentials } = await suite.tab.cdp.send('WebAuthn.getCredentials', { authenticatorId: suite.tab.authenticatorId! });
    expect(credentials).to.have.length(1);
    const scopes = await page.locator('.scopes li .scope-id').allTextContents();
    expect(scopes).to.deep.equal(['openid', 'profile', 'email', 'dn42']);
    expect(await focusedText(page), 'focus lands on Allow').to.equal('Allow');
    const entries = await page.evaluate(() => history.length);
    await page.keyboard.press('Enter');

    const callback = await landed();
    expectParamsPostedBack(watch, false);
    expect(await page.evaluate(() => history.length), 'the redirect replaces the page in the history').to.equal(entries);
    expect(callback.searchParams.get('state')).to.equal(pending.state);
    expect(callback.searchParams.get('code')).to.be.a('string').and.not.equal('');
    expect(suite.rp.arrivals.at(-1)?.searchParams.get('code')).to.equal(callback.searchParams.get('code'));
    const tokens = await oidc.authorizationCodeGrant(suite.config, callback, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
    });
    expect(tokens.claims()).to.include({ sub: subjectOf(GAMMA_MNT, GAMMA_ASN), auth_method: 'ssh' });
  });

  it('on a 390 px phone shows the signing command on one unbroken line that scrolls, and copies it exactly', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await suite.tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: suite.f.issuer });
    await open();
    await enterAsn('AS4242420010');
    await page.getByRole('button', { name: /Sign with the SSH key ssh-ed25519/ }).click({ timeout: 60_000 });
    await page.getByRole('heading', { name: 'Sign with your SSH key' }).waitFor();
    const command = (await page.locator('#command').textContent())!;
    expect(command).to.include(' -n dn42-autopeer -f ~/.ssh/id_ed25519');
    const box = await page.locator('#command').evaluate((code) => {
      const pre = code.parentElement!;
      return { lines: code.getClientRects().length, scrollWidth: pre.scrollWidth, clientWidth: pre.clientWidth, overflowX: getComputedStyle(pre).overflowX };
    });
    // One line box: no break anywhere inside the command, the hyphens included; wider than the phone, so it scrolls.
    expect(box.lines, 'line boxes of the command').to.equal(1);
    expect(box.overflowX).to.equal('auto');
    expect(box.scrollWidth).to.be.greaterThan(box.clientWidth);
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOTS}/authorize-command-phone.png`, fullPage: true });
    // By keyboard: the command's box takes focus and scrolls sideways with the arrow keys.
    await page.locator('pre.command').focus();
    await page.keyboard.press('ArrowRight');
    await eventually(async () => (await page.locator('pre.command').evaluate((pre) => pre.scrollLeft)) > 0, 5000, 'the command scrolled by keyboard');

    await page.getByRole('button', { name: 'Copy the command' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(command);
  });

  it('a passkey this browser never used is asked for from the methods screen: no login/begin until then, and then the passkey logs in', async () => {
    await enrolGammaPasskey(suite.f, suite.tab, { remembered: false });
    const problems = consoleProblems(page);
    await open();
    await enterAsn('AS4242420010');
    await page.getByRole('heading', { name: `Verify AS${GAMMA_ASN} (GAMMA-AS)` }).waitFor({ timeout: 60_000 });
    expect(problems()).to.deep.equal([]);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('heading', { name: `Log in to AS${GAMMA_ASN}` }).waitFor();
    await page.getByRole('button', { name: 'Use passkey' }).click();
    await page.getByRole('heading', { name: 'Allow Gamma Looking Glass to sign you in?' }).waitFor();
    expect(problems(), 'the passkey login asked for, and nothing failed').to.deep.equal([
      'POST /api/v1/passkeys/login/begin',
      'POST /api/v1/passkeys/login/finish',
    ]);
    expect(await page.evaluate(() => localStorage.getItem('dn42.passkey-asns'))).to.equal(JSON.stringify([GAMMA_ASN]));
  });

  it('"Use a passkey" for an AS without one says so and stays on the methods', async () => {
    await open();
    await enterAsn('AS4242420010');
    await page.getByRole('heading', { name: `Verify AS${GAMMA_ASN} (GAMMA-AS)` }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await eventually(
      async () => (await page.locator('#status').textContent()) === `No passkey is registered for AS${GAMMA_ASN}. Choose another way below.`,
      10_000,
      'the notice',
    );
    expect(await page.locator('#error').count()).to.equal(0);
    expect(await page.getByRole('heading', { name: `Verify AS${GAMMA_ASN} (GAMMA-AS)` }).count()).to.equal(1);
  });

  it('logs in with the passkey of the virtual authenticator and lands on the redirect URI with code and state', async () => {
    await enrolGammaPasskey(suite.f, suite.tab);
    const pending = await open();
    await enterAsn('4242420010');
    await page.getByRole('heading', { name: `Log in to AS${GAMMA_ASN}` }).waitFor();
    await page.getByRole('button', { name: 'Use passkey' }).click();
    // A passkey session has no enrolment step: straight to consent.
    await page.getByRole('heading', { name: 'Allow Gamma Looking Glass to sign you in?' }).waitFor();
    expect(await page.locator('main').textContent())
      .to.include(`AS${GAMMA_ASN}`)
      .and.include(GAMMA_MNT);
    await page.getByRole('button', { name: 'Allow' }).click();

    const callback = await landed();
    expect(callback.searchParams.get('state')).to.equal(pending.state);
    const tokens = await oidc.authorizationCodeGrant(suite.config, callback, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
    });
    expect(tokens.claims()?.sub).to.equal(subjectOf(GAMMA_MNT, GAMMA_ASN));
  });

  it('denies: lands on the redirect URI with access_denied and the state, without a code', async () => {
    await enrolGammaPasskey(suite.f, suite.tab);
    const watch = watchApprove(page);
    const pending = await open();
    await enterAsn('AS4242420010');
    await page.getByRole('button', { name: 'Use passkey' }).click();
    await page.getByRole('button', { name: 'Deny' }).click();
    const callback = await landed();
    expect(callback.searchParams.get('error')).to.equal('access_denied');
    expect(callback.searchParams.get('state')).to.equal(pending.state);
    expect(callback.searchParams.has('code')).to.equal(false);
    expectParamsPostedBack(watch, true);
  });

  it('verifies with an e-mailed code when the user picks another method than the passkey', async () => {
    await enrolGammaPasskey(suite.f, suite.tab);
    const pending = await open();
    await enterAsn('AS4242420010');
    await page.getByRole('button', { name: 'Use another method' }).click();
    // The e-mail option needs a captcha of its own: the page solved a second puzzle meanwhile.
    await page.getByRole('button', { name: /E-mail a code to ga\*\*\*@gamma\.example/ }).click();
    await page.getByRole('heading', { name: 'Enter the code from the e-mail' }).waitFor();
    expect(await focusedId(page), 'the code field takes focus').to.equal('answer');
    expect(await expectFieldsLabelled(page)).to.deep.equal(['Code']);
    expect(await page.getByRole('button', { name: 'Send a new code' }).isDisabled(), 'the re-send cooldown').to.equal(true);
    const code = suite.f.smtp.codeFor(GAMMA_EMAIL);
    await page.getByRole('textbox', { name: 'Code' }).fill(`${code.slice(0, 3)} ${code.slice(3)}`);
    await page.keyboard.press('Enter');
    // The maintainer has a passkey by now: no enrolment offer.
    await page.getByRole('heading', { name: 'Allow Gamma Looking Glass to sign you in?' }).waitFor();
    await page.getByRole('button', { name: 'Allow' }).click();
    const callback = await landed();
    expect(callback.searchParams.get('state')).to.equal(pending.state);
    const tokens = await oidc.authorizationCodeGrant(suite.config, callback, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
    });
    expect(tokens.claims()).to.include({ sub: subjectOf(GAMMA_MNT, GAMMA_ASN), auth_method: 'email' });
  });

  it('sends a faulty request with a verified redirect URI back to the application with the error', async () => {
    const pending = await open({ scope: 'profile email' });
    const callback = await landed();
    expect(callback.searchParams.get('error')).to.equal('invalid_scope');
    expect(callback.searchParams.get('state')).to.equal(pending.state);
  });

  it('shows the fatal screen for an unregistered redirect_uri and does not navigate away', async () => {
    const pending = await authorizationUrl(suite.config, 'http://127.0.0.1:9/not-registered');
    const arrivals = suite.rp.arrivals.length;
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => frame === page.mainFrame() && navigations.push(frame.url()));
    const requests: string[] = [];
    page.on('request', (req) => requests.push(`${req.isNavigationRequest() ? 'navigate' : 'fetch'} ${req.url()}`));
    await page.goto(pending.url.href);
    await page.getByRole('heading', { name: 'This sign-in request cannot continue' }).waitFor();
    expect(await page.locator('#error').textContent()).to.equal('redirect_uri is not registered for this client');
    expect(await focusedId(page), 'the error takes focus').to.equal('error');
    // Barrier: a request the page sends now is reported after every request it sent before (a navigation's too).
    await page.evaluate(() => fetch('/spec-barrier').catch(() => undefined));
    expect(requests.at(-1)).to.match(/^fetch .*\/spec-barrier$/);
    expect(
      requests.filter((r) => r.startsWith('navigate ')),
      'navigation requests',
    ).to.deep.equal([`navigate ${pending.url.href}`]);
    expect(page.url()).to.equal(pending.url.href);
    expect(navigations, 'only the page load itself').to.deep.equal([pending.url.href]);
    expect(suite.rp.arrivals.length).to.equal(arrivals);
    expect(await page.locator('a, button').count(), 'nothing on the fatal screen leads anywhere').to.equal(0);
  });

  it('shows a network failure with a retry that carries on once the service answers again', async () => {
    await page.route('**/api/v1/oauth/authorize-context*', (route) => route.abort('internetdisconnected'));
    await open();
    const error = page.locator('#error[role="alert"]');
    await error.waitFor();
    expect(await error.textContent()).to.equal(NETWORK_FAILURE);
    await page.unroute('**/api/v1/oauth/authorize-context*');
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByRole('heading', { name: 'Sign in to Gamma Looking Glass' }).waitFor();
    expect(await page.locator('#error').count()).to.equal(0);
    expect(await focusedId(page), 'the new screen focuses its field').to.equal('asn');
  });
});

/**
 * What went wrong in the page's console (errors, failed requests as Chromium
 * logs them) and every request to the passkey login, from now on: `problems()`
 * lists them, a request as `METHOD path`.
 */
function consoleProblems(page: Page): () => string[] {
  const seen: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') seen.push(`console: ${message.text()}`);
  });
  page.on('request', (request) => {
    if (request.url().includes('/passkeys/login/')) seen.push(`${request.method()} ${new URL(request.url()).pathname}`);
  });
  return () => [...seen];
}

/** A throw-away home whose `~/.ssh/id_ed25519` is the registered key, for the command the page shows. */
function homeWithKey(privateKeyPath: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'dn42-page-home-'));
  mkdirSync(join(dir, '.ssh'), { mode: 0o700 });
  copyFileSync(privateKeyPath, join(dir, '.ssh', 'id_ed25519'));
  chmodSync(join(dir, '.ssh', 'id_ed25519'), 0o600);
  return dir;
}
