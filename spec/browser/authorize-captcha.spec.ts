import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { buildPage } from '../../web/build.js';
import { authorizationUrl, rpConfig } from '../http/identity/oidc/rp-support.js';
import { GAMMA_ASN, registerClient, startOidc, type OidcFixture } from '../support/oidc.js';
import { launchChromium, skipWithoutChromium } from './authorize-support.js';

const SITE_KEY = 'spec-site-key';

/**
 * A Turnstile-style provider on loopback, both halves: `/widget.js` installs
 * `turnstile.render/reset` and draws an "I am human" button whose ticket names the
 * action and site key it was rendered with; `/siteverify` answers for such
 * tickets with that action, as the real provider reports the widget's action.
 */
class LoopbackCaptchaProvider {
  readonly verified: string[] = [];
  scriptLoads = 0;
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://provider').pathname;
      if (path === '/widget.js') {
        this.scriptLoads += 1;
        res.writeHead(200, { 'content-type': 'text/javascript' }).end(WIDGET);
        return;
      }
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const ticket = new URLSearchParams(body).get('response') ?? '';
        this.verified.push(ticket);
        const [action, sitekey] = ticket.split('|');
        const answer = sitekey === SITE_KEY ? { success: true, action } : { success: false, 'error-codes': ['invalid-input-response'] };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const WIDGET = `
window.turnstile = {
  render(container, options) {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = 'I am human';
    button.addEventListener('click', () => options.callback(options.action + '|' + options.sitekey + '|' + Math.random().toString(36).slice(2)));
    container.append(button);
    return 'widget-1';
  },
  reset() {},
};
`;

describe('Authorization page in a browser with an external captcha widget', function () {
  this.timeout(120_000);
  let f: OidcFixture;
  let provider: LoopbackCaptchaProvider;
  let browser: Browser;
  let page: Page;

  before(async function () {
    skipWithoutChromium(this);
    await buildPage();
    provider = await new LoopbackCaptchaProvider().start();
    f = await startOidc({
      CAPTCHA_KIND: 'external',
      CAPTCHA_VERIFY_URL: `${provider.url}/siteverify`,
      CAPTCHA_VERIFY_SECRET: 'siteverify-secret-for-the-page-spec',
      CAPTCHA_WIDGET_URL: `${provider.url}/widget.js?sitekey=${SITE_KEY}`,
    });
    browser = await launchChromium();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await f?.done();
    await provider?.close();
  });

  it('loads the widget named at runtime, renders it with the action peering-verify, and sends its ticket with the options', async () => {
    const redirectUri = 'http://127.0.0.1:9/cb';
    const client = await registerClient(f, { redirect_uris: [redirectUri], name: 'Widget App' });
    const pending = await authorizationUrl(await rpConfig(f, client), redirectUri);
    await page.goto(pending.url.href);
    await page.getByLabel('AS number').fill(`AS${GAMMA_ASN}`);
    await page.keyboard.press('Enter');

    const human = page.getByRole('button', { name: 'I am human' });
    await human.waitFor();
    expect(provider.scriptLoads, 'the script of CAPTCHA_WIDGET_URL, through the page CSP').to.equal(1);
    await page.locator('#status', { hasText: 'complete the captcha below' }).waitFor();
    expect(provider.verified, 'no ticket before the widget is solved').to.deep.equal([]);
    await human.click();

    await page.getByRole('heading', { name: `Verify AS${GAMMA_ASN} (GAMMA-AS)` }).waitFor();
    expect(provider.verified).to.have.length(1);
    expect(provider.verified[0]).to.match(new RegExp(`^peering-verify\\|${SITE_KEY}\\|`));

    // The e-mail option needs a captcha again: the reset widget asks for a new solve.
    await page.getByRole('button', { name: /E-mail a code/ }).click();
    await human.click();
    await page.getByRole('heading', { name: 'Enter the code from the e-mail' }).waitFor();
    expect(provider.verified).to.have.length(2);
    expect(provider.verified[1]).not.to.equal(provider.verified[0]);
  });
});
