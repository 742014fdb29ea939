import { mkdir } from 'node:fs/promises';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { node } from '../http/control/fleet/support.js';
import { issueAgentToken } from '../support/agents.js';
import { api, expectResponse } from '../support/http.js';
import { checkBirdSnippet, checkWireguardSnippet, wgGenkey, wgPubkey } from '../support/peer-config-check.js';
import { eventually } from '../support/wait.js';
import { launchChromium, skipWithoutChromium } from './authorize-support.js';
import { openPage, SCREENSHOTS, type ConsolePage } from './console-support.js';
import {
  answerProbe,
  ensurePortalBuilt,
  loggedInTab,
  loginThroughBrowser,
  PORTAL_ADMIN_TOKEN,
  postSnapshot,
  startPortalWorld,
  TOKEN_KEY,
  type PortalWorld,
} from './portal-support.js';

/** A full-page screenshot into `.data/screenshots/portal-<name>.png`. */
async function shot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOTS}/portal-${name}.png`, fullPage: true });
}

interface Created {
  id: number;
  node: string;
  wireguard: string;
  bird: string;
}

/**
 * The peering portal in Chromium against the real identity service and
 * control server: a login with an SSH signature through the authorization
 * page, a peering in each session form with the peer-side configuration read
 * from the page and checked by `bird -p` and `wg`, live state from an agent
 * snapshot, a latency probe answered by the node's agent, deletion; every page
 * at desktop and phone width, one in dark.
 */
describe('peering portal pages', function () {
  this.timeout(300_000);
  let world: PortalWorld;
  let browser: Browser;
  let tab: ConsolePage;
  let page: Page;
  let token: string;
  const created: Record<string, Created> = {};
  const url = (path: string) => `${world.portalUrl}${path}`;

  before(async function () {
    this.timeout(300_000);
    skipWithoutChromium(this);
    await ensurePortalBuilt();
    world = await startPortalWorld();
    browser = await launchChromium(['--disable-gpu', '--disable-background-networking', '--disable-component-update']);
    tab = await openPage(browser, { viewport: 'desktop' });
    // The browser's clock starts at the servers' test clock, so "5 min ago" reads as a user would see it.
    await tab.context.clock.install({ time: world.f.sys.clock.now() });
    page = tab.page;
  });
  after(async () => {
    await tab?.close();
    await browser?.close();
    await world?.close();
  });

  it('the completion page says why a login failed and offers it again, keeping next; a spent handoff shows the server’s detail', async () => {
    await page.goto(url('/auth/complete?error=login_expired&next=%2Fpeerings'));
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent())
      .to.include('unknown, already used or expired')
      .and.include('login_expired');
    const asked = page.waitForRequest((r) => r.url().includes('/autopeering/auth/login-url'));
    await page.getByRole('button', { name: 'Log in with your dn42 ASN' }).click();
    expect(new URL((await asked).url()).searchParams.get('next')).to.equal('/peerings');
    await page.waitForURL((u) => u.href.startsWith(`${world.f.issuer}/authorize?`));

    await page.goto(url('/auth/complete?handoff=not-a-real-code'));
    await page.getByText('invalid, expired or already used handoff code').waitFor();
    expect(page.url()).to.equal(url('/auth/complete'));
    expect(await page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)).to.equal(null);
  });

  it('sends a visitor to the login page keeping the page asked for; the button goes to the identity service; the login comes back there with the token in session storage', async function () {
    this.timeout(240_000);
    await page.goto(url('/peerings/new'));
    await page.waitForURL(url('/login?next=%2Fpeerings%2Fnew'));
    const login = page.getByRole('button', { name: 'Log in with your dn42 ASN' });
    await login.waitFor();
    await shot(page, 'login');
    await login.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((u) => u.href.startsWith(`${world.f.issuer}/authorize?`));
    await page.getByRole('heading', { name: 'Sign in to Autopeering portal' }).waitFor();

    // The fixture starts its own login (same endpoint family) and signs with ssh-keygen -Y sign.
    const { url: completed } = await loginThroughBrowser(page, world, { next: '/peerings/new' });
    expect(completed.pathname).to.equal('/portal/auth/complete');
    await page.waitForURL(url('/peerings/new'));
    await page.getByRole('heading', { name: 'New peering' }).waitFor();
    token = (await page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)) ?? '';
    expect(token).to.have.length.greaterThan(10);
    const me = await world.portal.get('/autopeering/me', { token });
    expectResponse(me).status(200);
    expect(me.body.profile).to.deep.include({ asn: world.asn, mntner: world.mntner, route: world.routes.route, route6: world.routes.route6 });
    // The handoff code left the address bar and the history.
    expect(page.url()).to.not.include('handoff');
  });

  it('shows our network: the map and the nodes open for peering with seats, region, bandwidth, quota and notice', async () => {
    expectResponse(await world.admin.patch('/admin/autopeering/nodes/ams1', { notice: 'Maintenance on Sunday from 02:00 UTC' })).status(200);
    await page.getByRole('link', { name: 'Our network' }).click();
    await page.getByRole('heading', { name: 'Our network', level: 1 }).waitFor();
    const fra = page.getByRole('article', { name: 'fra1' });
    await fra.waitFor();
    const text = await fra.textContent();
    expect(text).to.include('5 seats free').and.include('Europe, DE').and.include('1,000 Mbit/s').and.include('500 GB').and.include('192.0.2.1');
    expect(await page.getByRole('article', { name: 'ams1' }).getByRole('note').textContent()).to.include('Maintenance on Sunday from 02:00 UTC');
    await page.locator('fleet-map svg').first().waitFor();
    await shot(page, 'network');
  });

  it('creates a link-local multiprotocol peering by keyboard; the defaults are shown; the configuration shown passes bird -p and wg', async function () {
    this.timeout(120_000);
    // From our network, by keyboard: "Peer with fra1".
    await page.getByRole('link', { name: 'Peer with fra1' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(url('/peerings/new?node=fra1'));
    const node = page.getByLabel('Our node');
    await eventually(async () => (await node.inputValue()) === 'fra1', 5000, 'fra1 picked');
    expect(await page.getByLabel('Your link-local address').inputValue()).to.equal('fe80::10');
    expect(await page.getByLabel('Tunnel MTU').inputValue()).to.equal('1420');
    expect(await page.getByRole('radio', { name: /Link-local, multiprotocol/ }).isChecked()).to.equal(true);
    await shot(page, 'new-peering');

    // A wrong key first: the server's message shows at the field.
    await page.getByLabel('Your WireGuard public key').focus();
    await page.keyboard.type('not-a-key');
    await page.keyboard.press('Enter');
    const keyField = page.getByLabel('Your WireGuard public key');
    await eventually(async () => (await keyField.getAttribute('aria-invalid')) === 'true', 10_000, 'the key marked invalid');
    expect(await page.locator('#public_key-error').textContent()).to.match(/pattern|match/i);
    expect(await keyField.getAttribute('aria-describedby')).to.include('public_key-error');

    const key = await wgPubkey(await wgGenkey());
    await keyField.focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.type(key);
    const [, spec] = await Promise.all([page.keyboard.press('Enter'), answerProbe(world, 'fra1', 'mtu')]);
    expect(spec).to.include({ tool: 'mtu' });
    created.fra1 = await readCreated(page, 'fra1');
    expect(created.fra1.wireguard).to.include(`PublicKey = ${world.nodes.fra1.public_key}`).and.include('Endpoint = 192.0.2.1:');
    expect(created.fra1.bird).to.include(`neighbor ${world.nodes.fra1.link_local}%`).and.include(`as ${world.nodes.fra1.asn};`);
    await checkBirdSnippet(created.fra1.bird);
    await checkWireguardSnippet(created.fra1.wireguard);
    // The Copy button copies exactly the text shown.
    await tab.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.controlUrl });
    await page.getByRole('button', { name: 'Copy BIRD 2' }).focus();
    await page.keyboard.press('Enter');
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(created.fra1.bird);
    await shot(page, 'created');
  });

  it('creates a ULA single session: a tunnel address outside the route6 objects is refused at the field; the registry’s route6 is offered', async function () {
    this.timeout(120_000);
    await page.goto(url('/peerings/new?node=ams1'));
    await eventually(async () => (await page.getByLabel('Our node').inputValue()) === 'ams1', 5000, 'ams1 picked');
    await page.getByRole('radio', { name: /ULA, single session/ }).check();
    await page.getByLabel('Your WireGuard public key').fill(await wgPubkey(await wgGenkey()));
    const v6 = page.getByLabel('Your IPv6 tunnel address');
    await v6.fill('fd42:9999::1');
    await page.getByRole('button', { name: 'Create the peering' }).click();
    await page.locator('#peer_ipv6-error').waitFor();
    expect(await page.locator('#peer_ipv6-error').textContent()).to.include('register a route6 covering fd42:9999::1/128');
    expect(await v6.getAttribute('aria-invalid')).to.equal('true');
    expect(await page.getByRole('alert').first().textContent()).to.include(`AS${world.asn} holds ${world.routes.route6[0]}`);
    await shot(page, 'new-peering-invalid');
    await page.getByRole('button', { name: `Use fd42:4242:10::1 (route6 ${world.routes.route6[0]})` }).click();
    expect(await v6.inputValue()).to.equal('fd42:4242:10::1');
    await Promise.all([page.getByRole('button', { name: 'Create the peering' }).click(), answerProbe(world, 'ams1', 'mtu')]);
    created.ams1 = await readCreated(page, 'ams1');
    expect(created.ams1.bird).to.include(`neighbor ${world.nodes.ams1.loopback_ipv6} as`);
    await checkBirdSnippet(created.ams1.bird);
    await checkWireguardSnippet(created.ams1.wireguard);
  });

  it('creates two plain sessions with both tunnel addresses; their configuration passes bird -p and wg', async function () {
    this.timeout(120_000);
    await page.goto(url('/peerings/new?node=ber1'));
    await eventually(async () => (await page.getByLabel('Our node').inputValue()) === 'ber1', 5000, 'ber1 picked');
    await page.getByRole('radio', { name: /Two plain sessions/ }).check();
    await page.getByLabel('Your WireGuard public key').fill(await wgPubkey(await wgGenkey()));
    await page.getByLabel('Your endpoint (optional)').fill('peer.example.net:51820');
    await page.getByLabel('Your IPv6 tunnel address').fill(world.tunnel.ipv6);
    await page.getByLabel('Your IPv4 tunnel address').fill(world.tunnel.ipv4);
    await Promise.all([page.getByRole('button', { name: 'Create the peering' }).click(), answerProbe(world, 'ber1', 'mtu')]);
    created.ber1 = await readCreated(page, 'ber1');
    expect(created.ber1.bird)
      .to.match(/protocol bgp \S+_v4 \{/)
      .and.match(/protocol bgp \S+_v6 \{/);
    await checkBirdSnippet(created.ber1.bird);
    await checkWireguardSnippet(created.ber1.wireguard);
    const rows = (await world.portal.get('/autopeering/requests', { token })).body.requests as { node_id: string; form: string; status: string }[];
    expect(rows.map((r) => `${r.node_id}:${r.form}:${r.status}`).sort()).to.deep.equal([
      'ams1:ula-mp:provisioned',
      'ber1:dual-plain:provisioned',
      'fra1:link-local-mp:provisioned',
    ]);
  });

  it('lists my peerings with live state once the node reports, and shows the live session in the detail', async function () {
    this.timeout(60_000);
    const row = (await world.portal.get(`/autopeering/requests/${created.fra1.id}`, { token })).body;
    // Five reports five minutes apart with growing counters (traffic and route counts for the charts), the last one now.
    const t0 = world.f.sys.clock.now().getTime();
    for (const k of [4, 3, 2, 1]) {
      await postSnapshot(world, row, { capturedAt: new Date(t0 - k * 300_000), rxBytes: (5 - k) * 3e6, txBytes: (5 - k) * 6e6, sinceSeconds: 3600 - k * 300 });
    }
    await postSnapshot(world, row, { rxBytes: 15e6, txBytes: 30e6 });
    // The node's routing table: 60 IPv4 routes and one IPv6 route learnt through the peering's session (more than a page of 50).
    const learnt = (prefix: string) => ({ prefix, protocol: row.session_names[0], origin_asn: world.asn, as_path: [world.asn], rpki: 'valid', local: false });
    const table = [...Array.from({ length: 60 }, (_, i) => learnt(`172.20.42.${i}/32`)), learnt('fd42:4242:10::/48')];
    const captured_at = new Date(t0 - 60_000).toISOString();
    expectResponse(await world.nodes.fra1.agent.http.post('/agent/routing-table', { node_id: 'fra1', captured_at, rpki_observed: true, routes: table })).status(
      200,
    );
    await eventually(
      async () => (await world.portal.get(`/autopeering/requests/${created.fra1.id}/routes?family=4`, { token })).body.total === 60,
      10_000,
      'the routing table read',
    );
    await page.getByRole('link', { name: 'My peerings', exact: true }).click();
    const fraRow = page.getByRole('row', { name: 'Peering with fra1' });
    await fraRow.waitFor();
    expect(await fraRow.textContent()).to.include('established');
    expect(await page.getByRole('row', { name: 'Peering with ams1' }).textContent()).to.include('no report yet');
    await shot(page, 'peerings');

    await fraRow.getByRole('link', { name: 'fra1' }).click();
    await page.waitForURL(url(`/peerings/${created.fra1.id}`));
    const live = page.getByRole('region', { name: 'Live session' });
    await live.getByText('1 h 0 min').waitFor();
    const text = (await live.textContent()) ?? '';
    expect(text).to.include('established').and.include('15 MB').and.include('30 MB');
    const routes = live.getByRole('table', { name: 'Routes per address family' });
    expect(await routes.getByRole('row', { name: /IPv4/ }).textContent()).to.match(/IPv4\s*5\s*30/);
    expect(await routes.getByRole('row', { name: /IPv6/ }).textContent()).to.match(/IPv6\s*7\s*4/);
    // Routes learnt, a page of 50 at a time; the other family.
    const learntCard = page.getByRole('region', { name: 'Routes learnt from you' });
    await learntCard.getByText('60 routes').waitFor();
    expect(await learntCard.locator('tbody tr').count()).to.equal(50);
    await learntCard.getByRole('button', { name: 'Next' }).click();
    await learntCard.getByText('51–60 of 60').waitFor();
    expect(await learntCard.locator('tbody tr').count()).to.equal(10);
    await learntCard.getByLabel('Address family').selectOption('6');
    await learntCard.getByText('1 route', { exact: false }).waitFor();
    expect(await learntCard.locator('tbody').textContent())
      .to.include('fd42:4242:10::/48')
      .and.include(`AS${world.asn}`);
    // The configuration stays on the detail page.
    expect(await page.locator('#bird-config').textContent()).to.equal(created.fra1.bird);
  });

  it('runs a latency probe from the detail (the agent answers) and shows the result and the cooldown', async function () {
    this.timeout(90_000);
    const button = page.getByRole('button', { name: 'Run the latency probe' });
    await Promise.all([button.click(), answerProbe(world, 'fra1', 'latency')]);
    const result = page.locator('[data-latency]');
    await result.waitFor();
    expect(await result.textContent())
      .to.include('average 12.5 ms')
      .and.include('max 15.2 ms')
      .and.include('loss 0 %');
    await page.getByText(/Cooldown: next probe in (9|10) min/).waitFor();
    expect(await button.isDisabled()).to.equal(true);
    // The MTU probe that ran after the creation shows too.
    expect(await page.getByRole('region', { name: 'Probes' }).textContent()).to.include('path MTU 1420 bytes of 1420 bytes');
    // A range for the charts by keyboard, kept in the address.
    await page.getByRole('button', { name: '6h' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(url(`/peerings/${created.fra1.id}?range=6h`));
    // The charts draw the reports' traffic and route counts.
    await page.getByRole('img', { name: /Tunnel traffic over 6h/ }).waitFor();
    await page.getByRole('img', { name: /Route counts over 6h/ }).waitFor();
    expect(await page.locator('.chart .uplot').count()).to.equal(2);
    await shot(page, 'peering');
  });

  it('shows my flaps: none at first, then the session that went down', async function () {
    this.timeout(60_000);
    await page.getByRole('link', { name: 'My flaps' }).click();
    await page.getByText(`No flap of AS${world.asn} recorded`).waitFor();
    // The ams1 session comes up, then drops: the node's next snapshots record a session flap of the AS.
    const ams = (await world.portal.get(`/autopeering/requests/${created.ams1.id}`, { token })).body;
    const t0 = world.f.sys.clock.now().getTime();
    await postSnapshot(world, ams, { capturedAt: new Date(t0 - 180_000), sinceSeconds: 600 });
    await postSnapshot(world, ams, { capturedAt: new Date(t0 - 120_000), state: 'active', sinceSeconds: 10 });
    await postSnapshot(world, ams, { capturedAt: new Date(t0 - 60_000), sinceSeconds: 5 });
    await eventually(async () => (await world.portal.get('/autopeering/my/flaps', { token })).body.has_flaps === true, 10_000, 'a flap of the AS');
    await page.reload();
    const sessions = page.getByRole('table', { name: 'Your BGP sessions with our nodes' });
    await sessions.waitFor();
    expect(await sessions.textContent())
      .to.include('ams1')
      .and.include(ams.session_names[0]);
    await shot(page, 'flaps');
  });

  it('says what is missing: an unknown peering (the server’s detail) and an unknown page', async () => {
    await page.goto(url('/peerings/9999'));
    await page.getByRole('alert').getByText('unknown autopeering request 9999').waitFor();
    await page.goto(url('/no/such/page'));
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    await page.getByRole('link', { name: 'Go to our network' }).click();
    await page.getByRole('heading', { name: 'Our network', level: 1 }).waitFor();
  });

  it('shows the profile and refreshes the claims', async () => {
    await page.getByRole('link', { name: 'Profile' }).click();
    await page.getByRole('heading', { name: 'Originated prefixes' }).waitFor();
    const body = (await page.locator('main').textContent()) ?? '';
    expect(body).to.include(`AS${world.asn}`).and.include(world.mntner).and.include(world.routes.route[0]).and.include(world.routes.route6[0]);
    await page.getByRole('button', { name: 'Refresh claims' }).click();
    await page.getByText('Claims refreshed.').waitFor();
    await shot(page, 'profile');
  });

  it('walks every page at phone width, and one in dark', async function () {
    this.timeout(120_000);
    const phone = await loggedInTab(browser, world, token, { viewport: 'phone' });
    const pages: [string, string, () => Promise<unknown>][] = [
      ['/', 'network', () => phone.page.getByRole('article', { name: 'fra1' }).waitFor()],
      ['/peerings/new?node=ber1', 'new-peering', () => phone.page.getByLabel('Your WireGuard public key').waitFor()],
      ['/peerings', 'peerings', () => phone.page.getByRole('row', { name: 'Peering with fra1' }).waitFor()],
      [`/peerings/${created.fra1.id}`, 'peering', () => phone.page.getByRole('region', { name: 'Live session' }).waitFor()],
      ['/flaps', 'flaps', () => phone.page.getByRole('table', { name: 'Your BGP sessions with our nodes' }).waitFor()],
      ['/profile', 'profile', () => phone.page.getByRole('heading', { name: 'Originated prefixes' }).waitFor()],
    ];
    for (const [path, name, ready] of pages) {
      await phone.page.goto(url(path));
      await ready();
      // Nothing wider than the screen but the scrolling blocks (tables, configuration).
      const wide = await phone.page.evaluate(() => document.documentElement.scrollWidth);
      expect(wide, `${name} fits 390 px`).to.be.at.most(390);
      await shot(phone.page, `phone-${name}`);
    }
    phone.assertClean([/status of 4\d\d/]);
    await phone.close();

    const dark = await loggedInTab(browser, world, token, { viewport: 'desktop', colorScheme: 'dark' });
    await dark.page.goto(url(`/peerings/${created.fra1.id}?range=6h`));
    await dark.page.getByRole('region', { name: 'Live session' }).waitFor();
    await dark.page.locator('.chart .uplot').first().waitFor();
    await shot(dark.page, 'dark-peering');
    await dark.page.goto(url('/'));
    await dark.page.getByRole('article', { name: 'fra1' }).waitFor();
    await shot(dark.page, 'dark-network');
    dark.assertClean([/status of 4\d\d/]);
    await dark.close();
  });

  it('deletes a peering by keyboard after confirming; the node frees the seat', async () => {
    await page.goto(url(`/peerings/${created.fra1.id}`));
    const remove = page.getByRole('button', { name: 'Delete the peering' });
    await remove.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Delete the peering with fra1?' });
    await dialog.waitFor();
    expect(await dialog.textContent())
      .to.include('removes the WireGuard interface')
      .and.include('seat are freed');
    // Escape first: nothing happens.
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expectResponse(await world.portal.get(`/autopeering/requests/${created.fra1.id}`, { token }))
      .status(200)
      .body({ status: 'provisioned' });
    // Then by keyboard: Cancel has the focus, Tab to the confirmation, Enter.
    await remove.focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page.getByText(/^Deleted: fra1 no longer has the tunnel/).waitFor();
    expectResponse(await world.portal.get(`/autopeering/requests/${created.fra1.id}`, { token }))
      .status(200)
      .body({ status: 'cancelled', cancelled_by: 'requester' });
    const offers = (await world.portal.get('/autopeering/nodes', { token })).body.nodes as { node_id: string; remaining: number }[];
    expect(offers.find((n) => n.node_id === 'fra1')?.remaining).to.equal(5);
    await shot(page, 'deleted');
  });

  it('shows a node whose WireGuard key we do not know yet as not ready, with the server’s reason, and does not offer it for peering', async () => {
    const reason = "our node's WireGuard public key is not known yet: its agent has not registered";
    // muc1 is open for peering but its agent never registered: no key of ours to give the peer.
    expectResponse(await world.admin.post('/admin/nodes', node('muc1', { router_id: '172.20.0.9' }))).status(201);
    expectResponse(await world.admin.put('/admin/autopeering/nodes/muc1', { enabled: true, endpoint_host: '192.0.2.9', max_sessions: 31 })).status(200);
    let requestId: number | undefined;
    try {
      await page.goto(url('/'));
      const muc = page.getByRole('article', { name: 'muc1' });
      await muc.waitFor();
      expect(await muc.textContent())
        .to.include('not ready yet')
        .and.include(reason)
        .and.not.include('seats free');
      expect(await muc.getByRole('link', { name: 'Peer with muc1' }).count()).to.equal(0);
      // The ready nodes' seats only, as the server counts them.
      const offers = (await world.portal.get('/autopeering/nodes', { token })).body.nodes as { node_id: string; remaining: number; not_ready: string | null }[];
      const ready = offers.filter((o) => o.not_ready === null).reduce((n, o) => n + o.remaining, 0);
      expect(offers.find((o) => o.node_id === 'muc1')).to.deep.include({ remaining: 31, not_ready: reason });
      expect(await page.getByRole('status').filter({ hasText: 'nodes open' }).textContent()).to.include(`${ready} seats free`);
      await shot(page, 'network-not-ready');

      // Asked for by address, the form shows the reason and cannot be sent; the option cannot be picked.
      await page.goto(url('/peerings/new?node=muc1'));
      await page.getByLabel('Our node').waitFor();
      const option = page.locator('#f-node_id option[value="muc1"]');
      await eventually(async () => (await option.textContent())?.includes('not ready yet'), 5000, 'muc1 marked not ready');
      expect(await option.isDisabled()).to.equal(true);
      expect(await page.locator('#node_id-hint').textContent()).to.include(reason);
      expect(await page.getByRole('button', { name: 'Create the peering' }).isDisabled()).to.equal(true);
      await shot(page, 'new-peering-not-ready');

      // A peering asked for through the API all the same (the server takes it): its page says the configuration
      // is not ready and why, not as an error, and shows it once the node's agent has registered our key.
      const made = await world.portal.post('/autopeering/requests', { node_id: 'muc1', public_key: await wgPubkey(await wgGenkey()) }, { token });
      expectResponse(made).status(201);
      requestId = made.body.id as number;
      await page.goto(url(`/peerings/${requestId}`));
      const pending = page.locator('#config-pending');
      await pending.waitFor();
      expect(await pending.textContent()).to.include('not known until its agent registers');
      expect(await page.getByRole('alert').count(), 'no error shown').to.equal(0);
      await shot(page, 'peering-config-pending');
      const agent = api(`${world.controlUrl}/control/v1`, { token: (await issueAgentToken(world.controlUrl, PORTAL_ADMIN_TOKEN, 'muc1')).token });
      const nodeKey = await wgPubkey(await wgGenkey());
      expectResponse(await agent.post('/agent/wireguard-keys', { node_id: 'muc1', public_key: nodeKey })).status(200);
      await page.reload();
      await page.locator('#wg-config').waitFor();
      expect(await page.locator('#wg-config').textContent()).to.include(`PublicKey = ${nodeKey}`);
      expect(await page.locator('#config-pending').count()).to.equal(0);
    } finally {
      if (requestId !== undefined) expectResponse(await world.portal.delete(`/autopeering/requests/${requestId}`, { token })).status(200);
      expectResponse(await world.admin.patch('/admin/autopeering/nodes/muc1', { enabled: false })).status(200);
    }
  });

  it('an ended session leads back to the login keeping the page; logging out ends the session at the server', async () => {
    // The session is revoked elsewhere (another tab logs out): the next call answers 401.
    expectResponse(await world.portal.post('/autopeering/auth/logout', {}, { token })).status(204);
    await page.getByRole('link', { name: 'My peerings', exact: true }).click();
    await page.waitForURL(url('/login?next=%2Fpeerings'));
    await page.getByText('Your portal session has ended').waitFor();
    expect(await page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)).to.equal(null);

    // A fresh login, then "Log out" from the bar.
    await loginThroughBrowser(page, world, { next: '/profile' });
    await page.waitForURL(url('/profile'));
    const second = (await page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)) ?? '';
    await page.getByRole('banner').getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(url('/login'));
    await page.getByText('You are logged out.').waitFor();
    expectResponse(await world.portal.get('/autopeering/me', { token: second })).status(401);
    tab.assertClean([/status of 4\d\d/]);
  });
});

/** After a successful create: the request id from the link, and the configuration exactly as the Copy buttons copy it (the `<pre>` texts). */
async function readCreated(page: Page, node: string): Promise<Created> {
  await page.getByRole('heading', { name: `Peering with ${node} created` }).waitFor({ timeout: 30_000 });
  const href = (await page.getByRole('link', { name: 'Open the peering' }).getAttribute('href')) ?? '';
  const id = Number(/peerings\/(\d+)$/.exec(href)?.[1]);
  expect(id, 'request id').to.be.greaterThan(0);
  await page.getByRole('button', { name: 'Copy WireGuard (wg-quick)' }).waitFor();
  await page.getByRole('button', { name: 'Copy BIRD 2' }).waitFor();
  return { id, node, wireguard: (await page.locator('#wg-config').textContent()) ?? '', bird: (await page.locator('#bird-config').textContent()) ?? '' };
}
