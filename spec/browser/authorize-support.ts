import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type * as oidc from 'openid-client';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page, type Request } from 'playwright-core';
import { buildPage } from '../../web/build.js';
import { rpConfig } from '../http/identity/oidc/rp-support.js';
import { expectResponse } from '../support/http.js';
import { grantFor } from '../support/identity.js';
import { GAMMA_ASN, GAMMA_MNT, registerClient, startOidc, type OidcFixture } from '../support/oidc.js';

/** Debian's Chromium, which `.ci/run` installs; the browser specs skip themselves without it. */
export const CHROMIUM = '/usr/bin/chromium';

/** Skips the suite (with a note) when Chromium is not installed. */
export function skipWithoutChromium(ctx: Mocha.Context): void {
  if (existsSync(CHROMIUM)) return;
  console.warn(`    skipped: ${CHROMIUM} is absent (CI installs Debian's chromium)`);
  ctx.skip();
}

/** Headless Chromium; extra `args` e.g. host-resolver rules. */
export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', ...args], headless: true });
}

/** The relying party's redirect URI: a loopback server that records what arrives. */
export class LoopbackApp {
  private readonly requests: URL[] = [];
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.requests.push(new URL(req.url ?? '/', this.url));
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>app</title><p>back in the app</p>');
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  get redirectUri(): string {
    return `${this.url}/cb`;
  }

  /** Requests of the redirect URI path (the browser may also ask for /favicon.ico). */
  get arrivals(): URL[] {
    return this.requests.filter((u) => u.pathname === '/cb');
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** One test's browser state: its own context (no cookies or storage of another test) and, when asked, its own virtual authenticator. */
export interface Tab {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  authenticatorId?: string;
}

/**
 * A fresh context and page. With `authenticator`, a CTAP2 platform authenticator
 * that verifies the user and consents by itself, as Chromium's CDP WebAuthn domain offers.
 */
export async function openTab(browser: Browser, options: { authenticator?: boolean } = {}): Promise<Tab> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  if (!options.authenticator) return { context, page, cdp };
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { context, page, cdp, authenticatorId };
}

/** What `useAuthorizePage` holds for the tests of a suite (set in its hooks). */
export interface AuthorizePageSuite {
  readonly f: OidcFixture;
  /** The application's redirect URI, registered as the public client "Gamma Looking Glass". */
  readonly rp: LoopbackApp;
  /** The application's relying-party view of the service. */
  readonly config: oidc.Configuration;
  readonly browser: Browser;
  /** This test's tab, with its own virtual authenticator. */
  readonly tab: Tab;
}

/**
 * Mocha hooks of a browser suite of the authorization page: skipped without
 * Chromium; the page built, the service started with `env` (read then, so it may
 * name a server an earlier hook started), a loopback app registered as "Gamma
 * Looking Glass", Chromium launched with `chromiumArgs`. Before each test
 * GAMMA-MNT loses its passkeys and a fresh tab opens, so the tests do not depend
 * on their order; all is closed after the suite.
 */
export function useAuthorizePage(options: { env?: () => Record<string, string>; chromiumArgs?: string[] } = {}): AuthorizePageSuite {
  const suite = {} as { -readonly [K in keyof AuthorizePageSuite]: AuthorizePageSuite[K] };
  before(async function () {
    skipWithoutChromium(this);
    await buildPage();
    suite.f = await startOidc(options.env?.());
    suite.rp = await new LoopbackApp().start();
    suite.config = await rpConfig(suite.f, await registerClient(suite.f, { redirect_uris: [suite.rp.redirectUri], name: 'Gamma Looking Glass' }));
    suite.browser = await launchChromium(options.chromiumArgs);
  });
  beforeEach(async () => {
    await removeGammaPasskeys(suite.f);
    suite.tab = await openTab(suite.browser, { authenticator: true });
  });
  afterEach(() => suite.tab?.context.close());
  after(async () => {
    await suite.browser?.close();
    await suite.rp?.close();
    await suite.f?.done();
  });
  return suite;
}

/** Removes every passkey of GAMMA-MNT through the API (a session issued directly, no challenge spent), so a test starts without one. */
export async function removeGammaPasskeys(f: OidcFixture): Promise<void> {
  const { token } = await grantFor(f.sys, GAMMA_MNT, GAMMA_ASN, 'ssh');
  const listed = await f.client.get('/api/v1/passkeys', { token });
  expectResponse(listed).status(200);
  for (const p of listed.body.passkeys as { credential_id: string }[]) {
    expectResponse(await f.client.delete(`/api/v1/passkeys/${encodeURIComponent(p.credential_id)}`, { token })).status(204);
  }
}

/**
 * Registers a passkey of GAMMA-MNT in the tab's virtual authenticator through the
 * API (register/begin and finish from a page of the issuer's origin), so a test
 * that logs in with a passkey does not depend on another test having enrolled one.
 * Unless `remembered` is false, the browser also keeps GAMMA's AS number as the
 * page does once it saved or used a passkey (`dn42.passkey-asns` in local
 * storage), so the page offers the passkey as soon as the AS number is in.
 */
export async function enrolGammaPasskey(f: OidcFixture, tab: Tab, options: { remembered?: boolean } = {}): Promise<void> {
  const { token } = await grantFor(f.sys, GAMMA_MNT, GAMMA_ASN, 'ssh');
  await tab.page.goto(`${f.issuer}/healthz`);
  const status = await tab.page.evaluate(async (session) => {
    const auth = { authorization: `Bearer ${session}`, 'content-type': 'application/json' };
    const begin = await (await fetch('/api/v1/passkeys/register/begin', { method: 'POST', headers: auth })).json();
    const created = (await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(begin.options) })) as PublicKeyCredential;
    const finish = await fetch('/api/v1/passkeys/register/finish', {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ ceremony_id: begin.ceremony_id, credential: created.toJSON(), label: 'spec' }),
    });
    return finish.status;
  }, token);
  expect(status, 'register/finish').to.equal(201);
  if (options.remembered !== false) await tab.page.evaluate((asn) => localStorage.setItem('dn42.passkey-asns', JSON.stringify([asn])), GAMMA_ASN);
}

/** The id of the element that has focus. */
export function focusedId(page: Page): Promise<string | undefined> {
  return page.evaluate(() => document.activeElement?.id || undefined);
}

/** The text of the element that has focus. */
export function focusedText(page: Page): Promise<string | undefined> {
  return page.evaluate(() => document.activeElement?.textContent ?? undefined);
}

/**
 * Every form field on the screen has an accessible name from a `<label>` (or
 * `aria-label`/`aria-labelledby`), and every `aria-describedby` points at
 * elements that exist. Returns the labels, for the caller to compare.
 */
export async function expectFieldsLabelled(page: Page): Promise<string[]> {
  const fields = await page.evaluate(() =>
    [...document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>('#screen input, #screen textarea, #screen select')].map((el) => ({
      id: el.id,
      labels: [...(el.labels ?? [])].map((l) => l.textContent?.trim() ?? ''),
      aria: el.getAttribute('aria-label') ?? el.getAttribute('aria-labelledby'),
      describedBy: (el.getAttribute('aria-describedby') ?? '').split(/\s+/).filter(Boolean),
      missing: (el.getAttribute('aria-describedby') ?? '').split(/\s+/).filter((id) => id && !document.getElementById(id)),
    })),
  );
  for (const field of fields) {
    expect(field.labels.length > 0 || !!field.aria, `#${field.id} has a label`).to.equal(true);
    expect(
      field.labels.every((l) => l !== ''),
      `#${field.id}: no empty label`,
    ).to.equal(true);
    expect(field.missing, `#${field.id}: aria-describedby points at existing elements`).to.deep.equal([]);
  }
  return fields.flatMap((f) => f.labels);
}

/** Presses Tab until the focused element's text matches `pattern` (at most `limit` times); fails otherwise. */
export async function tabTo(page: Page, pattern: RegExp, limit = 15): Promise<void> {
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    if (pattern.test((await focusedText(page)) ?? '')) return;
  }
  expect.fail(`no element matching ${pattern} within ${limit} Tab presses`);
}

/** Waits for the browser to land on the redirect URI and returns where it landed. */
export async function landed(page: Page, redirectUri: string): Promise<URL> {
  await page.waitForURL((url) => url.href.startsWith(redirectUri), { timeout: 30_000 });
  return new URL(page.url());
}

/**
 * Records what the page sends to `approve` and what authorize-context answered,
 * so a spec can compare the posted body with `params` byte for byte.
 */
export function watchApprove(page: Page): { contextText(): string | undefined; approve(): Request | undefined } {
  let contextText: string | undefined;
  let approve: Request | undefined;
  page.on('response', async (res) => {
    if (res.url().includes('/api/v1/oauth/authorize-context')) contextText = await res.text().catch(() => undefined);
  });
  page.on('request', (req) => {
    if (req.url().includes('/api/v1/oauth/approve')) approve = req;
  });
  return { contextText: () => contextText, approve: () => approve };
}

/**
 * The approve request carried the session and, as its body, exactly the bytes of
 * authorize-context's `params` (as the service serialised them) with `deny` appended.
 */
export function expectParamsPostedBack(watch: ReturnType<typeof watchApprove>, deny: boolean): void {
  const text = watch.contextText();
  const request = watch.approve();
  expect(text, 'authorize-context answered').to.be.a('string');
  expect(request, 'approve was called').not.to.equal(undefined);
  const params = JSON.parse(text!).params as Record<string, unknown>;
  const raw = JSON.stringify(params);
  expect(text, 'params as the service wrote them').to.include(`"params":${raw}`);
  expect(request!.postData()).to.equal(`${raw.slice(0, -1)},"deny":${deny}}`);
  expect(request!.headers().authorization).to.match(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
}

/** Runs a command line exactly as the page shows it, in `sh`, with extra environment (HOME, GNUPGHOME). */
export function runAsShown(command: string, env: Record<string, string>): string {
  return execFileSync('sh', ['-c', command], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }).toString('utf8');
}
