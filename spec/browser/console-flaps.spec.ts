import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { issueAgentToken } from '../support/agents.js';
import { api, expectResponse } from '../support/http.js';
import { launchChromium, skipWithoutChromium } from './authorize-support.js';
import { buildWeb } from '../../web/build.js';
import { WEB_BUILD_DIR } from '../../web/files.js';
import { openPage, shot, signInWithToken, startConsoleFleet, type ConsoleFleet, type ConsolePage } from './console-support.js';

/**
 * Cases seeded beside the fixture's (whose flapping prefix enters at edge-fra-1's flapping BETA-AS session: near), each
 * reported by edge-lon-1 over GAMMA and edge-nyc-1 over AS4242420012:
 * - origin: one prefix flapping over both peers with the same origin;
 * - path: two prefixes of different origins whose paths share the link X – Y behind both peers;
 * - moas: one prefix announced by a different origin over each peer, flapping at both.
 */
const ORIGIN_PREFIX = '172.22.5.0/24';
const ORIGIN_ASN = 4242420099;
const PATH_PREFIXES = ['172.23.1.0/24', '172.23.2.0/24'];
const PATH_ORIGINS = [4242420200, 4242420201];
const LINK = [4242420150, 4242420151] as const;
const MOAS_PREFIX = '172.24.0.0/24';
const MOAS_ORIGINS = [4242420100, 4242420101];

interface Loc {
  zone: string;
  confidence: number;
  culprit_asn: number | null;
  culprit_edge: number[] | null;
}

describe('console flaps: prefix flaps with the localisation in words, session flaps, peers, alerts, stats (Chromium)', function () {
  this.timeout(240_000);
  let f: ConsoleFleet;
  let browser: Browser;
  let located: Map<string, Loc | null>;
  let admin: ReturnType<typeof api>;

  before(async function () {
    this.timeout(240_000);
    skipWithoutChromium(this);
    if (!existsSync(join(WEB_BUILD_DIR, 'console', 'index.html'))) await buildWeb(['console']);
    f = await startConsoleFleet();
    admin = api(`${f.url}/control/v1`, { token: f.adminToken });
    // The origin case: edge-lon-1 (over GAMMA, keeping the fixture's row) and edge-nyc-1 (over AS4242420012) both see
    // ORIGIN_PREFIX flap with the same origin, through the agent endpoint the nodes report with.
    const now = new Date().toISOString();
    const report = async (nodeId: string, entries: Record<string, unknown>[]) => {
      const { token } = await issueAgentToken(f.url, f.adminToken, nodeId);
      const res = await api(`${f.url}/control/v1`, { token }).post('/agent/prefix-flaps', {
        node_id: nodeId,
        captured_at: now,
        feed_state: 'established',
        entries,
        total_changes: 60,
      });
      expectResponse(res).status(200);
    };
    const entry = (prefix: string, peer: number, path: number[], score: number) => ({
      prefix,
      peer_asn: peer,
      origin_asn: path.at(-1),
      score,
      as_path: [peer, ...path],
      announcements: 12,
      withdrawals: 12,
    });
    const cases = (peer: number, share: number, moasOrigin: number) => [
      entry(ORIGIN_PREFIX, peer, [ORIGIN_ASN], 80 * share),
      entry(PATH_PREFIXES[0], peer, [...LINK, PATH_ORIGINS[0]], 60 * share),
      entry(PATH_PREFIXES[1], peer, [...LINK, PATH_ORIGINS[1]], 55 * share),
      entry(MOAS_PREFIX, peer, [moasOrigin], 50 * share),
    ];
    await report(f.nodes.drift, [
      ...cases(f.peerAsns.gamma, 1, MOAS_ORIGINS[0]),
      { prefix: f.prefixToBlock, peer_asn: f.peerAsns.gamma, origin_asn: 4242420077, score: 30, as_path: [f.peerAsns.gamma, f.peerAsns.beta, 4242420077] },
    ]);
    await report(f.nodes.sessionDown, cases(f.peerAsns.epsilon, 0.9, MOAS_ORIGINS[1]));
    const res = await admin.get('/ui/fleet/prefix-flaps?group=prefix');
    expectResponse(res).status(200);
    located = new Map((res.body.prefixes as { prefix: string; localization: Loc | null }[]).map((p) => [p.prefix, p.localization]));
    browser = await launchChromium(['--disable-gpu', '--disable-background-networking', '--disable-component-update']);
  });
  after(async () => {
    await browser?.close();
    await f?.close();
  });

  async function open(viewport: 'desktop' | 'phone', path: string, colorScheme: 'light' | 'dark' = 'light'): Promise<ConsolePage> {
    const cp = await openPage(browser, { viewport, colorScheme });
    await signInWithToken(cp.page, f.url, f.adminToken);
    await cp.page.goto(`${f.url}/console${path}`);
    return cp;
  }

  const prefixCard = (page: Page, prefix: string) => page.locator(`li.prefix[data-prefix="${prefix}"]`);
  const sentenceOf = (page: Page, prefix: string) => prefixCard(page, prefix).locator('[data-sentence]');

  it('locates the seeded cases over HTTP: near BETA-AS (flapping session), at the origin, on the link X – Y, MOAS', () => {
    expect(located.get(f.prefixToBlock)).to.include({ zone: 'near', culprit_asn: f.peerAsns.beta });
    expect(located.get(ORIGIN_PREFIX)).to.include({ zone: 'origin', culprit_asn: ORIGIN_ASN });
    for (const p of PATH_PREFIXES) expect(located.get(p)).to.deep.include({ zone: 'path', culprit_edge: [...LINK] });
    expect(located.get(MOAS_PREFIX)).to.include({ zone: 'moas', culprit_asn: null });
  });

  for (const viewport of ['desktop', 'phone'] as const) {
    it(`walks every flaps tab and a peer detail at ${viewport} width`, async () => {
      const cp = await open(viewport, '/flaps');
      const { page } = cp;
      await page.getByRole('heading', { name: 'Flaps', level: 1 }).waitFor();
      // Prefix flaps: the sentence names the culprit and how sure, in words.
      const near = sentenceOf(page, f.prefixToBlock);
      await near.waitFor();
      const nearText = (await near.textContent()) ?? '';
      expect(nearText).to.match(/^(Most likely|Probably|Possibly) the peer AS4242420002 \(BETA-AS\) \(confidence 0\.\d+\)/);
      expect(nearText)
        .to.include(f.flappingSession.nodeId)
        .and.include('the flap enters the fleet only through the session to it')
        .and.include('BGP session flaps itself');
      const origin = (await sentenceOf(page, ORIGIN_PREFIX).textContent()) ?? '';
      expect(origin).to.match(new RegExp(`the origin AS${ORIGIN_ASN} \\(confidence 0\\.\\d+\\): every peer direction sees the flap with the same origin`));
      expect(origin).to.include(`AS${f.peerAsns.gamma}`).and.include(`AS${f.peerAsns.epsilon}`);
      expect(await sentenceOf(page, PATH_PREFIXES[0]).textContent()).to.match(
        new RegExp(
          `^(Probably|Possibly) the link between AS${LINK[0]} and AS${LINK[1]} \\(confidence 0\\.\\d+\\): the flapping paths of this prefix and of prefixes of other origins cross that link`,
        ),
      );
      expect(await sentenceOf(page, MOAS_PREFIX).textContent()).to.match(
        new RegExp(
          `a MOAS conflict \\(confidence 0\\.\\d+\\): the prefix is announced by 2 origins, AS${MOAS_ORIGINS[0]} and AS${MOAS_ORIGINS[1]}, and the routes flip between them`,
        ),
      );
      expect(await page.getByText('Where the flaps come from').count()).to.equal(1);
      // Expanded: evidence, directions, nodes, and where to act (the mitigations page, prefilled).
      await prefixCard(page, f.prefixToBlock).getByRole('button', { name: f.prefixToBlock }).click();
      const card = prefixCard(page, f.prefixToBlock);
      await card.getByRole('table', { name: `Directions of ${f.prefixToBlock}` }).waitFor();
      expect(await card.getByRole('link', { name: `Disable peer AS${f.peerAsns.beta}…` }).getAttribute('href')).to.equal(
        `./fleet/mitigations?asn=${f.peerAsns.beta}`,
      );
      expect(await card.getByRole('link', { name: `Block ${f.prefixToBlock}…` }).getAttribute('href')).to.equal(
        `./fleet/mitigations?prefix=${encodeURIComponent(f.prefixToBlock)}`,
      );
      expect(await card.getByRole('link', { name: f.flappingSession.nodeId }).first().getAttribute('href')).to.equal(`./nodes/${f.flappingSession.nodeId}`);
      await shot(page, `flaps-prefixes-${viewport}`);

      // Session flaps and peering issues.
      await page.getByRole('navigation', { name: 'Flap views' }).getByRole('link', { name: 'Session flaps' }).click();
      await page.waitForURL(/\/console\/flaps\/sessions$/);
      const sessions = page.getByRole('table', { name: 'Session flaps' });
      await sessions.getByText(f.flappingSession.name).first().waitFor();
      await page.getByRole('table', { name: 'Peering issues' }).getByText('dn42_epsilon_v4').first().waitFor();
      await shot(page, `flaps-sessions-${viewport}`);

      // Flap peers, then a peer's detail from its link.
      await page.getByRole('navigation', { name: 'Flap views' }).getByRole('link', { name: 'Flap peers' }).click();
      const peers = page.getByRole('table', { name: 'Flap peers' });
      await peers.getByRole('link', { name: `AS${f.peerAsns.beta}` }).waitFor();
      await shot(page, `flaps-peers-${viewport}`);
      await peers.getByRole('link', { name: `AS${f.peerAsns.beta}` }).click();
      await page.waitForURL(new RegExp(`/console/flaps/peers/${f.peerAsns.beta}$`));
      await page.getByRole('heading', { name: `Flap peer AS${f.peerAsns.beta}` }).waitFor();
      await page
        .getByRole('table', { name: `eBGP sessions of AS${f.peerAsns.beta}` })
        .getByText(f.flappingSession.name)
        .first()
        .waitFor();
      const row = page.locator(`li[data-prefix="${f.prefixToBlock}"] [data-sentence]`);
      expect(await row.textContent()).to.include('the peer AS4242420002');
      await page
        .getByRole('link', { name: `Disable peer AS${f.peerAsns.beta}…` })
        .first()
        .waitFor();
      await shot(page, `flaps-peer-${viewport}`);

      // Alerts: the open prefix alert and the session alert.
      await page.goto(`${f.url}/console/flaps/alerts`);
      const alerts = page.locator('tr[data-alert]');
      await alerts.first().waitFor();
      const listed = await admin.get('/ui/fleet/flap-alerts');
      expect(await alerts.count()).to.equal(listed.body.alerts.length);
      await page.locator('tr[data-alert]', { hasText: f.prefixToBlock }).getByText('open').waitFor();
      await shot(page, `flaps-alerts-${viewport}`);

      // Stats: the gauge and both charts.
      await page.getByRole('link', { name: 'Stats' }).click();
      await page.locator('[data-gauge]').waitFor();
      expect(await page.locator('[data-gauge]').textContent()).to.match(/changes\/s$/);
      await page.locator('.chart canvas').nth(1).waitFor();
      await shot(page, `flaps-stats-${viewport}`);
      cp.assertClean();
      await cp.close();
    });
  }

  it('reads in the dark theme', async () => {
    const cp = await open('desktop', '/flaps', 'dark');
    await sentenceOf(cp.page, f.prefixToBlock).waitFor();
    await prefixCard(cp.page, ORIGIN_PREFIX).getByRole('button', { name: ORIGIN_PREFIX }).click();
    await prefixCard(cp.page, ORIGIN_PREFIX)
      .getByRole('table', { name: `Nodes seeing ${ORIGIN_PREFIX}` })
      .waitFor();
    await shot(cp.page, 'flaps-prefixes-dark');
    cp.assertClean();
    await cp.close();
  });

  it('explains the same localisation from a second control instance on the same database', async () => {
    const second = await f.startSecondInstance();
    try {
      const cp = await openPage(browser, { viewport: 'desktop' });
      await signInWithToken(cp.page, second.url, f.adminToken);
      await cp.page.goto(`${second.url}/console/flaps`);
      const text = await sentenceOf(cp.page, ORIGIN_PREFIX).textContent();
      expect(text).to.include(`the origin AS${ORIGIN_ASN}`);
      expect(await sentenceOf(cp.page, f.prefixToBlock).textContent()).to.include('the peer AS4242420002 (BETA-AS)');
      cp.assertClean();
      await cp.close();
    } finally {
      await second.close();
    }
  });

  it('pages the alerts on with Older (before_id), by keyboard, to the list the server keeps', async () => {
    const all = await admin.get('/ui/fleet/flap-alerts');
    expectResponse(all).status(200);
    const ids = (all.body.alerts as { id: number }[]).map((a) => String(a.id));
    expect(ids.length).to.be.at.least(2);
    const cp = await open('phone', '/flaps/alerts?limit=1');
    const { page } = cp;
    const rows = page.locator('tr[data-alert]');
    await rows.first().waitFor();
    expect(await rows.count()).to.equal(1);
    const older = page.getByRole('button', { name: 'Older' });
    for (let shown = 1; shown < ids.length; shown++) {
      await older.focus();
      await page.keyboard.press('Enter');
      await page.waitForFunction((n) => document.querySelectorAll('tr[data-alert]').length === n, shown + 1);
    }
    expect(await rows.evaluateAll((list) => list.map((r) => r.getAttribute('data-alert')))).to.deep.equal(ids);
    // A full last page cannot tell whether more follow: one more page answers none, and the button goes.
    await older.focus();
    await page.keyboard.press('Enter');
    await page.getByText(`${ids.length} shown: that is all.`).waitFor();
    expect(await older.count()).to.equal(0);
    cp.assertClean();
    await cp.close();
  });

  it('goes through the tabs, filters the alerts and expands a prefix with the keyboard only', async () => {
    const cp = await open('desktop', '/flaps');
    const { page } = cp;
    await sentenceOf(page, f.prefixToBlock).waitFor();
    const tabs = page.getByRole('navigation', { name: 'Flap views' });
    // From the current tab, Tab to the next one and follow it.
    await tabs.getByRole('link', { name: 'Prefix flaps' }).focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Session flaps');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/flaps\/sessions$/);
    await page.getByRole('table', { name: 'Peering issues' }).waitFor();
    expect(await tabs.getByRole('link', { name: 'Session flaps' }).getAttribute('aria-current')).to.equal('page');

    // Alerts: Tab along the tabs, then the filter's radio group by arrow keys: open only, as the server answers it.
    await tabs.getByRole('link', { name: 'Session flaps' }).focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Alerts');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/flaps\/alerts$/);
    await page.locator('tr[data-alert]').first().waitFor();
    // The focus stays on the tab followed; past the last tab comes the filter.
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Alerts');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.value)).to.equal('all');
    await page.keyboard.press('ArrowRight');
    await page.waitForURL(/\/flaps\/alerts\?active=1$/);
    const opened = await admin.get('/ui/fleet/flap-alerts?active=1');
    expectResponse(opened).status(200);
    const ids = (opened.body.alerts as { id: number }[]).map((a) => String(a.id));
    expect(ids.length).to.be.at.least(2);
    await page.waitForFunction((n) => {
      const rows = [...document.querySelectorAll('tr[data-alert]')];
      return rows.length === n && rows.every((r) => r.querySelector('.pill')?.textContent === 'open');
    }, ids.length);
    expect(await page.locator('tr[data-alert]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-alert')))).to.deep.equal(ids);

    // Back to the prefix flaps (Shift+Tab to the tab, Enter) and open a prefix's detail with Enter, close it with Space.
    await tabs.getByRole('link', { name: 'Alerts' }).focus();
    for (let i = 0; i < 3; i++) await page.keyboard.press('Shift+Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Prefix flaps');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/flaps$/);
    const button = prefixCard(page, f.prefixToBlock).getByRole('button', { name: f.prefixToBlock });
    await button.waitFor();
    // Tab on from the tab to the first prefix (the strongest: the fixture's), past the toolbar and the feeds.
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Prefix flaps');
    for (let i = 0; i < 20 && !(await page.evaluate(() => !!document.activeElement?.closest('li[data-prefix]'))); i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.closest('li')?.getAttribute('data-prefix'))).to.equal(f.prefixToBlock);
    await page.keyboard.press('Enter');
    expect(await button.getAttribute('aria-expanded')).to.equal('true');
    const directions = prefixCard(page, f.prefixToBlock).getByRole('table', { name: `Directions of ${f.prefixToBlock}` });
    await directions.waitFor();
    expect(await directions.getByRole('link', { name: /AS4242420002/ }).count()).to.be.at.least(1);
    // The evidence is listed in words.
    expect(await prefixCard(page, f.prefixToBlock).locator('.evidence').textContent()).to.match(/of the flap score/);
    await page.keyboard.press('Space');
    expect(await button.getAttribute('aria-expanded')).to.equal('false');
    expect(await directions.count()).to.equal(0);
    cp.assertClean();
    await cp.close();
  });
});
