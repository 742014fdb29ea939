import { mkdir } from 'node:fs/promises';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import type { Notifier } from '../../commands/notify/notifier.js';
import { NOTIFY_ENV, Receiver, startTestNotifier, verifySignature } from '../http/control/notifications/support.js';
import { expectResponse } from '../support/http.js';
import { wgGenkey, wgPubkey } from '../support/peer-config-check.js';
import { eventually } from '../support/wait.js';
import { launchChromium, skipWithoutChromium } from './authorize-support.js';
import { openPage, SCREENSHOTS, type ConsolePage } from './console-support.js';
import { ensurePortalBuilt, loggedInTab, loginThroughBrowser, postSnapshot, startPortalWorld, TOKEN_KEY, type PortalWorld } from './portal-support.js';

const BASE = '/autopeering/notifications/channels';
const ADDRESS = 'noc@gamma.example';

/** A full-page screenshot into `.data/screenshots/portal-notifications-<name>.png`. */
async function shot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOTS}/portal-notifications-${name}.png`, fullPage: true });
}

/** The subject header of a raw message, unfolded. */
const subjectOf = (raw: string) => /^Subject: (.*)$/m.exec(raw.replace(/\r?\n[ \t]+/g, ' '))?.[1] ?? '';

interface ChannelRow {
  channel_id: string;
  name: string;
  confirmed: boolean;
  paused: boolean;
  subscriptions: { kinds: string[]; node_ids: string[]; min_severity: string; down_after_s: number; repeat_window_s: number }[];
}

/**
 * The portal's Notifications page in Chromium, against the real identity
 * service (login through the authorization page), the control server, its
 * notifier, the loopback SMTP sink and a loopback webhook receiver: a peer
 * adds an address and confirms it with the mailed code, subscribes, and a
 * test arrives in the sink; adds a webhook, keeps its secret, and the test and
 * a real session-down of its peering arrive signed; pauses, resumes, deletes.
 * At desktop and phone width.
 */
describe('peering portal: notifications page', function () {
  this.timeout(300_000);
  let world: PortalWorld;
  let receiver: Receiver;
  let notifier: Notifier;
  let browser: Browser;
  let tab: ConsolePage;
  let page: Page;
  let token: string;
  let secret: string;
  const url = (path: string) => `${world.portalUrl}${path}`;
  const channels = async () => (await world.portal.get(BASE, { token })).body as ChannelRow[];
  const channelNamed = async (name: string) => (await channels()).find((c) => c.name === name) ?? expect.fail(`no channel ${name}`);
  const card = (name: string) => page.getByRole('article', { name });

  before(async function () {
    this.timeout(300_000);
    skipWithoutChromium(this);
    await ensurePortalBuilt();
    receiver = await new Receiver().start();
    // The identity fixture's SMTP sink is the system's SMTP_URL; loopback webhooks are allowed as in the notification specs.
    world = await startPortalWorld({ nodes: ['fra1'], env: NOTIFY_ENV });
    notifier = startTestNotifier(world.f.sys);
    browser = await launchChromium(['--disable-gpu', '--disable-background-networking', '--disable-component-update']);
    tab = await openPage(browser, { viewport: 'desktop' });
    await tab.context.clock.install({ time: world.f.sys.clock.now() });
    page = tab.page;
  });
  after(async () => {
    await tab?.close();
    await browser?.close();
    await notifier?.stop();
    await world?.close();
    await receiver?.close();
  });

  it('logs in through the authorization page straight to the notifications; the nav marks the page', async function () {
    this.timeout(240_000);
    await loginThroughBrowser(page, world, { next: '/notifications' });
    await page.waitForURL(url('/notifications'));
    await page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();
    token = (await page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)) ?? '';
    expect(token).to.have.length.greaterThan(10);
    expect(await page.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'Notifications' }).getAttribute('aria-current')).to.equal('page');
    await page.getByText('No channel yet').waitFor();
    expect(await page.title()).to.equal('Notifications · Peer with us');
  });

  it('adds an e-mail address by keyboard, takes the mailed code (a wrong one at the field first), subscribes, and a test arrives in the sink', async function () {
    this.timeout(120_000);
    await page.getByLabel('Name').focus();
    await page.keyboard.type('NOC mail');
    await page.keyboard.press('Tab');
    await page.keyboard.type(ADDRESS);
    await page.keyboard.press('Enter');
    const mail = card('NOC mail');
    await mail.waitFor();
    expect(await mail.locator('[data-state]').textContent()).to.equal('waiting for the code');
    // The keyboard is on the code field of the new channel.
    const code = mail.getByLabel('Confirmation code');
    await eventually(async () => code.evaluate((el) => el === document.activeElement), 5000, 'the code field focused');

    const [codeMail] = await eventually(() => world.f.smtp.to(ADDRESS).length === 1 && world.f.smtp.to(ADDRESS), { timeoutMs: 15_000, what: 'the code mail' });
    const mailed = /Your confirmation code: (\d{6})/.exec(codeMail.raw)?.[1] ?? expect.fail('no code in the mail');
    // The code mail is in the delivery log, waiting for nothing.
    await mail.getByRole('row', { name: /Delivery: .*confirm/i }).waitFor({ timeout: 15_000 });
    await shot(page, 'code');

    await page.keyboard.type(mailed === '000000' ? '111111' : '000000');
    await page.keyboard.press('Enter');
    await eventually(async () => (await code.getAttribute('aria-invalid')) === 'true', 10_000, 'the wrong code marked');
    expect(await mail.locator(`#${await code.getAttribute('id')}-msg`).textContent()).to.equal('wrong confirmation code');
    await code.fill(mailed);
    await code.press('Enter');
    await mail.getByText(`${ADDRESS} is confirmed`).waitFor();
    expect(await mail.locator('[data-state]').textContent()).to.equal('active');
    expect(await code.count()).to.equal(0);

    // Subscribe: sessions down for 5 minutes and flap alerts opening, warning and above.
    const form = mail.getByRole('form', { name: 'Add a subscription' });
    await form.getByLabel('A session of mine stays down').check();
    await form.getByLabel('A flap alert opens on my session or prefix').check();
    await form.getByLabel('Least severity').selectOption('warning');
    await form.getByLabel('Session down for at least (minutes)').fill('5');
    await form.getByRole('button', { name: 'Subscribe' }).click();
    await mail.getByText('NOC mail is subscribed.').waitFor();
    const sub = mail.getByRole('listitem').filter({ hasText: 'A session of mine stays down' });
    await sub.waitFor();
    expect(await sub.textContent())
      .to.include('all my peerings')
      .and.include('warning and above')
      .and.include('sessions down for 5 min');
    const [saved] = (await channelNamed('NOC mail')).subscriptions;
    expect(saved).to.deep.include({
      kinds: ['session_down', 'flap_alert_opened'],
      node_ids: [],
      min_severity: 'warning',
      down_after_s: 300,
      repeat_window_s: 600,
    });

    await mail.getByRole('button', { name: 'Send a test to NOC mail' }).click();
    const [, test] = await eventually(() => world.f.smtp.to(ADDRESS).length === 2 && world.f.smtp.to(ADDRESS), { timeoutMs: 15_000, what: 'the test mail' });
    expect(subjectOf(test.raw)).to.equal('[info] Test notification for NOC mail');
    // The log shows it delivered (it refreshes every 5 s).
    const row = mail.getByRole('row', { name: 'Delivery: Test notification for NOC mail' });
    await eventually(async () => (await row.getByText('delivered').count()) === 1, { timeoutMs: 15_000, what: 'the test delivered in the log' });
    await shot(page, 'email');
  });

  it('adds a webhook: the secret is shown once and focused; the test and a real session-down of the peering with fra1 arrive signed', async function () {
    this.timeout(120_000);
    // A peering with fra1 (through the API): the subscription form offers its node.
    const made = await world.portal.post('/autopeering/requests', { node_id: 'fra1', public_key: await wgPubkey(await wgGenkey()) }, { token });
    expectResponse(made).status(201);
    await postSnapshot(world, made.body, { state: 'established' });
    await page.reload();
    await page.getByRole('heading', { name: 'Add a channel' }).waitFor();

    await page.getByRole('radio', { name: 'Webhook' }).check();
    await page.getByLabel('Name').fill('My hook');
    await page.getByLabel('Webhook URL').fill(`${receiver.url}/hook`);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const block = page.locator('#webhook-secret');
    await block.waitFor();
    await eventually(async () => block.evaluate((el) => el === document.activeElement), 5000, 'the secret focused');
    secret = (await block.textContent()) ?? '';
    expect(secret).to.match(/^whsec_/);
    await shot(page, 'secret');

    const hook = card('My hook');
    const form = hook.getByRole('form', { name: 'Add a subscription' });
    await form.getByLabel('A session of mine stays down').check();
    await form.getByLabel('fra1').check();
    await form.getByLabel('Session down for at least (minutes)').fill('0');
    await form.getByLabel('Fold repeats for (minutes)').fill('0');
    await form.getByRole('button', { name: 'Subscribe' }).click();
    await hook.getByText('My hook is subscribed.').waitFor();
    expect((await channelNamed('My hook')).subscriptions[0]).to.deep.include({
      kinds: ['session_down'],
      node_ids: ['fra1'],
      down_after_s: 0,
      repeat_window_s: 0,
    });

    await hook.getByRole('button', { name: 'Send a test to My hook' }).click();
    const [test] = await eventually(() => receiver.on('/hook').length === 1 && receiver.on('/hook'), { timeoutMs: 15_000, what: 'the test request' });
    expect(verifySignature(secret, test), 'signed with the secret shown').to.equal(true);
    expect(JSON.parse(test.body)).to.include({ kind: 'test' });

    // The peer's session on fra1 goes down a minute later: its notification comes to the webhook (down for 0 minutes).
    world.f.sys.clock.advance(60_000);
    // The browser's clock follows, so the page's "5 s ago" stays what a user would read.
    await tab.context.clock.setSystemTime(world.f.sys.clock.now());
    await postSnapshot(world, made.body, { state: 'idle' });
    const [, down] = await eventually(() => receiver.on('/hook').length === 2 && receiver.on('/hook'), { timeoutMs: 15_000, what: 'the session-down request' });
    expect(verifySignature(secret, down)).to.equal(true);
    expect(JSON.parse(down.body)).to.include({ kind: 'session_down', peer_asn: world.asn, node_id: 'fra1' });
    const keys = new Set([test, down].map((r) => String(r.headers['idempotency-key'])));
    for (const title of ['Test notification for My hook', JSON.parse(down.body).title as string]) {
      const row = hook.getByRole('row', { name: `Delivery: ${title}` });
      await eventually(async () => (await row.getByText('delivered').count()) === 1, { timeoutMs: 15_000, what: `${title} delivered in the log` });
    }
    const log = (await world.portal.get(`${BASE}/${(await channelNamed('My hook')).channel_id}/deliveries`, { token })).body as { notification_id: string }[];
    expect(new Set(log.map((d) => d.notification_id))).to.deep.equal(keys);
    await shot(page, 'webhook');

    // Hidden, the secret is gone for good: a reload does not show it.
    await page.getByRole('button', { name: 'I have saved it, hide it' }).click();
    await block.waitFor({ state: 'detached' });
    await page.reload();
    await card('My hook').waitFor();
    expect(await page.content()).to.not.include(secret);
  });

  it('pauses and resumes a channel, showing the paused state; deletes one after saying what goes', async () => {
    const hook = card('My hook');
    await hook.getByRole('button', { name: 'Pause My hook' }).click();
    await hook.getByText(/^Paused .*Its notifications wait/).waitFor();
    expect(await hook.locator('[data-state]').textContent()).to.equal('paused');
    expect((await channelNamed('My hook')).paused).to.equal(true);
    await shot(page, 'paused');
    await hook.getByRole('button', { name: 'Resume My hook' }).click();
    await eventually(async () => (await hook.locator('[data-state]').textContent()) === 'active', 10_000, 'resumed');

    const remove = hook.getByRole('button', { name: 'Delete My hook' });
    await remove.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Delete the channel My hook?' });
    await dialog.waitFor();
    expect(await dialog.textContent())
      .to.include(`${receiver.url}/hook receives nothing from us any more`)
      .and.include('1 subscription(s)');
    // Cancel has the focus: Tab to the confirmation, Enter.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByText('The channel My hook is deleted.').waitFor();
    await hook.waitFor({ state: 'detached' });
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('channels-title');
    expect((await channels()).map((c) => c.name)).to.deep.equal(['NOC mail']);
    tab.assertClean([/status of 4\d\d/]);
  });

  it('reads well on a 390 px phone', async function () {
    this.timeout(120_000);
    const phone = await loggedInTab(browser, world, token, { viewport: 'phone' });
    try {
      await phone.page.goto(url('/notifications'));
      await phone.page.getByRole('article', { name: 'NOC mail' }).getByRole('row', { name: 'Delivery: Test notification for NOC mail' }).waitFor();
      // An unconfirmed address too, with its code field.
      await phone.page.getByLabel('Name').fill('Second mail');
      await phone.page.getByLabel('E-mail address').fill('second@gamma.example');
      await phone.page.getByRole('button', { name: 'Add e-mail address' }).click();
      await phone.page.getByRole('article', { name: 'Second mail' }).getByLabel('Confirmation code').waitFor();
      const wide = await phone.page.evaluate(() => document.documentElement.scrollWidth);
      expect(wide, 'the page fits 390 px').to.be.at.most(390);
      await shot(phone.page, 'phone');
      // Screen-sized views too: the full page is too tall to read at once.
      const views: [string, () => Promise<void>][] = [
        ['top', () => phone.page.evaluate(() => window.scrollTo(0, 0))],
        ['log', () => phone.page.getByRole('table', { name: 'Deliveries to NOC mail, newest first' }).scrollIntoViewIfNeeded()],
        ['confirm', () => phone.page.getByRole('form', { name: 'Confirm second@gamma.example' }).scrollIntoViewIfNeeded()],
      ];
      for (const [name, scroll] of views) {
        await scroll();
        await phone.page.screenshot({ path: `${SCREENSHOTS}/portal-notifications-phone-${name}.png` });
      }
      phone.assertClean([/status of 4\d\d/]);
    } finally {
      await phone.close();
    }
  });
});
