import { mkdir } from 'node:fs/promises';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { createControlApp } from '../../http/control/app.js';
import { createIdentityApp } from '../../http/identity/app.js';
import { createRegistryApp } from '../../http/registry/app.js';
import { buildReference } from '../../web/build.js';
import { createTestSystem, startApp, type TestSystem } from '../support/system.js';
import { launchChromium, skipWithoutChromium } from './authorize-support.js';

/** Screenshots the suite takes (gitignored): look at them after a change to the page. */
const SHOTS = '.data/screenshots';
const BROWSER_ARGS = ['--disable-gpu', '--disable-background-networking', '--disable-component-update'];

/** Each service's page and one operation it must list (Redoc gives each operation the section `operation/<operationId>`). */
const SERVICES = [
  {
    name: 'control',
    prefix: '/control/v1',
    build: createControlApp,
    operationId: 'getAdminNodes',
    summary: 'all nodes ordered by node_id',
    field: 'current_generation',
    title: 'dn42-control control server',
  },
  {
    name: 'identity',
    prefix: '/api/v1',
    build: createIdentityApp,
    operationId: 'postPasskeysLoginBegin',
    summary: 'options for logging in to an ASN with a passkey',
    field: 'asn',
    title: 'dn42-control identity service',
  },
  {
    name: 'registry',
    prefix: '/registry/v1',
    build: createRegistryApp,
    operationId: 'getAsnsByAsn',
    summary: 'ASN record',
    field: 'as_name',
    title: 'dn42-control registry replica',
  },
] as const;

describe('API reference pages in Chromium', function () {
  this.timeout(180_000);
  let sys: TestSystem;
  let browser: Browser;
  const urls = new Map<string, string>();
  const closers: (() => Promise<void>)[] = [];

  before(async function () {
    skipWithoutChromium(this);
    await mkdir(SHOTS, { recursive: true });
    await buildReference();
    sys = await createTestSystem();
    for (const s of SERVICES) {
      const started = await startApp(s.build(sys.context));
      closers.push(started.close);
      urls.set(s.name, started.url);
    }
    browser = await launchChromium(BROWSER_ARGS);
  });
  after(async () => {
    await browser?.close();
    for (const close of closers) await close();
    await sys?.close();
  });

  for (const s of SERVICES) {
    it(`${s.name}: ${s.prefix}/docs renders the service's document (${s.operationId} listed) with every request on its own origin and no CSP refusal`, async () => {
      const origin = new URL(urls.get(s.name)!).origin;
      const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
      const page = await context.newPage();
      const requests: string[] = [];
      const problems: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      page.on('response', (r) => {
        if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
      });
      page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
      page.on('console', (m) => {
        // A failed load is listed with its address by the response listener.
        if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
      });
      await page.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP refused ${e.violatedDirective}: ${e.blockedURI}`));
      });
      try {
        const res = await page.goto(`${origin}${s.prefix}/docs`);
        expect(res?.status()).to.equal(200);
        await page.waitForSelector('#reference[data-rendered="true"]', { timeout: 60_000 });
        const operation = page.locator(`[data-section-id="operation/${s.operationId}"]`);
        await operation.first().waitFor({ timeout: 30_000 });
        expect(await operation.first().innerText()).to.include(s.summary);
        expect(await page.title()).to.equal(`${s.title} · API reference`);
        expect(await page.locator('[data-section-id^="operation/"]').count()).to.be.above(5);
        // The known operation's response schema is drawn with its fields (the screenshot shows it).
        await page.goto(`${origin}${s.prefix}/docs#operation/${s.operationId}`);
        await operation.first().waitFor({ timeout: 30_000 });
        expect(await operation.first().innerText()).to.match(new RegExp(s.field));
        await page.screenshot({ path: `${SHOTS}/api-reference-${s.name}.png` });
        const elsewhere = requests.filter((url) => new URL(url).origin !== origin);
        expect(elsewhere, 'requests to another origin').to.deep.equal([]);
        expect(requests).to.include(`${origin}${s.prefix}/openapi.json`);
        expect(problems).to.deep.equal([]);
      } finally {
        await context.close();
      }
    });
  }
});
