import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { evaluateFlapAlerts } from '../../commands/flap-alerts.js';
import { raiseSignal } from '../../commands/notify/fanout.js';
import type { Notifier } from '../../commands/notify/notifier.js';
import { startAgents, type AgentHarness } from '../http/control/agent/telemetry-support.js';
import { ADMIN_TOKEN } from '../http/control/fleet/support.js';
import { NOTIFY_ENV, Receiver, startTestNotifier, verifySignature, wallClock } from '../http/control/notifications/support.js';
import { TestSmtp } from '../http/identity/verification-support.js';
import { expectResponse } from '../support/http.js';
import { eventually } from '../support/wait.js';
import { launchChromium, skipWithoutChromium } from './authorize-support.js';
import { ensureConsoleBuilt, openPage, shot, signInWithToken, type ConsolePage } from './console-support.js';

const PREFIX = '172.21.0.0/24';
const NOC = 'noc@ops.example';

/**
 * Issue 32: an operator adds a webhook and an e-mail channel on the console's
 * Notifications page, subscribes both to flap alerts, test-sends, and a flap
 * alert opened through agent reports reaches each exactly once; a failing
 * webhook is shown paused and resumed from the page.
 */
describe('console Notifications page: channels, subscriptions, delivery log, pausing', function () {
  this.timeout(240_000);
  let h: AgentHarness;
  let smtp: TestSmtp;
  let receiver: Receiver;
  let notifier: Notifier;
  let browser: Browser;

  before(async function () {
    this.timeout(240_000);
    skipWithoutChromium(this);
    await ensureConsoleBuilt();
    smtp = await new TestSmtp().start();
    receiver = await new Receiver().start();
    h = await startAgents(['n1'], { ...NOTIFY_ENV, SMTP_URL: smtp.url, MAIL_FROM: 'dn42 <control@spec.example>' });
    wallClock(h.sys);
    notifier = startTestNotifier(h.sys);
    browser = await launchChromium(['--disable-gpu', '--disable-background-networking', '--disable-component-update']);
  });
  after(async () => {
    await browser?.close();
    await notifier?.stop();
    await h?.close();
    await receiver?.close();
    await smtp?.close();
  });

  async function open(viewport: 'desktop' | 'phone' = 'desktop'): Promise<ConsolePage> {
    const cp = await openPage(browser, { viewport });
    await signInWithToken(cp.page, h.url, ADMIN_TOKEN);
    await cp.page.goto(`${h.url}/console/notifications`);
    await cp.page.getByRole('heading', { name: 'Notifications', level: 1 }).waitFor();
    return cp;
  }

  /** Ticks a kind in the open channel's subscription form and adds it. */
  async function subscribeToFlapAlerts(page: Page, channel: string) {
    await page.getByRole('heading', { name: channel, level: 2, exact: true }).waitFor();
    await page.getByLabel('Flap alert opened').check();
    await page.getByLabel('Suppress repeats for (s)').fill('0');
    await page.getByRole('button', { name: 'Add subscription' }).click();
    await page.getByText('Flap alert opened · every node · from info').waitFor();
  }

  const channelRow = (page: Page, name: string) => page.getByRole('row', { name: `Channel ${name}` });

  it('adds a webhook and an e-mail channel, test-sends, and a real flap alert reaches each exactly once', async () => {
    const cp = await open();
    const { page } = cp;
    // The webhook.
    await page.getByLabel('Name').fill('NOC chat');
    await page.getByLabel('URL').fill(`${receiver.url}/console-hook`);
    await page.getByLabel('Payload').selectOption('text');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const secretBox = page.getByLabel('Webhook signing secret');
    await secretBox.waitFor();
    const secret = await secretBox.inputValue();
    expect(secret).to.match(/^whsec_/);
    // The page focuses the secret once its channel list is refreshed: wait for that, not for the box alone.
    await eventually(async () => (await page.evaluate(() => document.activeElement?.id)) === 'secret', { timeoutMs: 5000, what: 'the secret focused' });
    await subscribeToFlapAlerts(page, 'NOC chat');
    await shot(page, 'notifications-webhook-added');
    await page.getByRole('button', { name: 'Done, hide it' }).click();

    // Test-send from the table; the log shows it delivered.
    await page.getByRole('button', { name: 'Send a test notification to NOC chat' }).click();
    await page.getByText('Test notification queued for NOC chat').waitFor();
    const [test] = await eventually(() => receiver.on('/console-hook').length === 1 && receiver.on('/console-hook'));
    expect(verifySignature(secret, test)).to.equal(true);
    await page.getByRole('row', { name: 'Delivery Test notification for NOC chat' }).getByText('delivered').waitFor({ timeout: 15_000 });

    // The e-mail channel.
    await page.getByLabel('E-mail').check();
    await page.getByLabel('Name').fill('NOC mail');
    await page.getByLabel('Address').fill(NOC);
    await page.getByRole('button', { name: 'Add e-mail channel' }).click();
    await subscribeToFlapAlerts(page, 'NOC mail');
    await channelRow(page, 'NOC mail').getByText('active').waitFor();

    // A flap alert opened for real: agent reports, then the alert job.
    const body = {
      node_id: 'n1',
      captured_at: new Date().toISOString(),
      feed_state: 'established',
      entries: [{ prefix: PREFIX, peer_asn: 4242420002, origin_asn: 4242420077, score: 150 }],
    };
    expectResponse(await h.agent.n1.post('/agent/prefix-flaps', body)).status(200);
    expect(await evaluateFlapAlerts(h.sys.context, h.sys.clock.now())).to.include({ opened: 1 });
    await eventually(() => receiver.on('/console-hook').length === 2 && smtp.to(NOC).length === 1, { timeoutMs: 15_000, what: 'the alert on both channels' });
    expect(JSON.parse(receiver.on('/console-hook')[1].body).text).to.match(/^\[warning\] Flap alert opened: prefix 172\.21\.0\.0\/24/);
    // The page's log shows the alert delivered on the mail channel (selected last); the rows say one attempt each.
    await page
      .getByRole('row', { name: /^Delivery Flap alert opened: prefix 172\.21\.0\.0\/24/ })
      .getByText('delivered')
      .waitFor({ timeout: 15_000 });
    const rows = await h.sys.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM notify_outbox WHERE kind = 'flap_alert_opened' AND status = 'delivered' AND attempts = 1`,
    );
    expect(rows.rows[0].n).to.equal(2);
    expect(receiver.on('/console-hook')).to.have.length(2);
    expect(smtp.to(NOC)).to.have.length(1);
    await shot(page, 'notifications-delivered');
    cp.assertClean();
    await cp.close();
  });

  it('shows a webhook paused after repeated failures with the reason, and resumes it', async () => {
    let broken = true;
    receiver.respond = (r, res) => (r.path === '/console-hook' && broken ? res.writeHead(500).end('receiver down') : res.writeHead(204).end());
    // Three real notifications fail in turn (NOTIFY_PAUSE_AFTER=3 here).
    for (let i = 0; i < 3; i++)
      await raiseSignal(
        h.sys.pool,
        {
          id: `console-spec-${i}`,
          kind: 'flap_alert_opened',
          severity: 'warning',
          node_id: 'n1',
          nodes: ['n1'],
          peer_asn: null,
          group: `console ${i}`,
          title: `Flap alert opened: session s${i} on n1`,
          lines: [],
          at: new Date().toISOString(),
          facts: {},
        },
        { floodLimit: 100 },
      );
    await eventually(async () => (await h.admin.get('/admin/notifications/channels')).body.some((c: { paused: boolean }) => c.paused), {
      timeoutMs: 15_000,
      what: 'the webhook paused',
    });
    const cp = await open();
    const { page } = cp;
    const row = channelRow(page, 'NOC chat');
    await row.getByText('paused after failures').waitFor();
    expect(await row.textContent()).to.include('3 consecutive failed deliveries; last: HTTP 500: receiver down');
    await row.getByRole('button', { name: 'Show channel NOC chat' }).click();
    const notice = page.locator('p.notice');
    await notice.waitFor();
    expect((await notice.textContent())?.replace(/\s+/g, ' ')).to.match(
      /^Paused .* ago: 3 consecutive failed deliveries; last: HTTP 500: receiver down\. Its notifications wait; resume it when the receiver is back\.$/,
    );
    await shot(page, 'notifications-paused');
    broken = false;
    await page.getByRole('button', { name: 'Resume NOC chat' }).click();
    await row.getByText('active').waitFor();
    await eventually(
      async () => (await h.sys.pool.query(`SELECT count(*)::int AS n FROM notify_outbox WHERE status IN ('queued', 'attempted')`)).rows[0].n === 0,
      {
        timeoutMs: 15_000,
        what: 'the waiting notifications delivered after the resume',
      },
    );
    cp.assertClean();
    await cp.close();
    const phone = await open('phone');
    await channelRow(phone.page, 'NOC mail').waitFor();
    await shot(phone.page, 'notifications-phone');
    phone.assertClean();
    await phone.close();
  });
});
