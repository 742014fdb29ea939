import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { WEB_BUILD_DIR } from '../../web/files.js';
import { buildWeb } from '../../web/build.js';
import { api, expectResponse } from '../support/http.js';
import { eventually } from '../support/wait.js';
import { launchChromium, skipWithoutChromium } from './authorize-support.js';
import { openPage, shot, signInWithToken, startConsoleFleet, type ConsoleFleet, type ConsolePage } from './console-support.js';

/**
 * Issue 22, the fleet and record pages: DNS, enrollment, registrations,
 * releases, autopeering, mitigations, audit and registry, walked at desktop and
 * phone width; the mitigation and registration flows done by keyboard only and
 * checked over HTTP.
 */
describe('console fleet pages: DNS, tokens, registrations, releases, autopeering, mitigations, audit, registry', function () {
  this.timeout(240_000);
  let f: ConsoleFleet;
  let browser: Browser;
  let admin: ReturnType<typeof api>;

  before(async function () {
    this.timeout(240_000);
    skipWithoutChromium(this);
    if (!existsSync(join(WEB_BUILD_DIR, 'console', 'index.html'))) await buildWeb(['console']);
    f = await startConsoleFleet();
    admin = api(f.api, { token: f.adminToken });
    browser = await launchChromium(['--disable-gpu', '--disable-background-networking', '--disable-component-update']);
  });
  after(async () => {
    await browser?.close();
    await f?.close();
  });

  async function open(path: string, viewport: 'desktop' | 'phone' = 'desktop', colorScheme: 'light' | 'dark' = 'light'): Promise<ConsolePage> {
    const cp = await openPage(browser, { viewport, colorScheme });
    await signInWithToken(cp.page, f.url, f.adminToken);
    await cp.page.goto(`${f.url}/console${path}`);
    return cp;
  }

  /** The element that has the keyboard focus: its tag, id and text. */
  const focused = (page: Page) =>
    page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      return { tag: el?.tagName ?? '', id: el?.id ?? '', text: (el?.textContent ?? '').trim() };
    });

  /** Tab until the focused element's text matches (at most `max` presses). */
  async function tabTo(page: Page, text: RegExp, max = 12): Promise<void> {
    for (let i = 0; i < max; i++) {
      await page.keyboard.press('Tab');
      if (text.test((await focused(page)).text)) return;
    }
    throw new Error(`no focusable element matching ${text} within ${max} tabs (at ${JSON.stringify(await focused(page))})`);
  }

  /** In the open confirmation: Tab from Cancel (focused first) to the confirm button and press Enter. */
  async function confirmByKeyboard(page: Page, title: RegExp): Promise<void> {
    const dialog = page.locator('dialog.confirm[open]');
    await dialog.waitFor();
    expect(await dialog.locator('h2').textContent()).to.match(title);
    expect((await focused(page)).text).to.equal('Cancel');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.hasAttribute('data-confirm'))).to.equal(true);
    await page.keyboard.press('Enter');
    await page
      .locator('dialog.confirm[open]')
      .waitFor({ state: 'detached' })
      .catch(() => undefined);
    await page.waitForFunction(() => !document.querySelector('dialog.confirm')?.hasAttribute('open'));
  }

  interface Mitigations {
    blocked_prefixes: { prefix: string; nodes: string[] }[];
  }

  it('blocks and unblocks a prefix by keyboard, through the preview and the confirmation', async () => {
    const prefix = f.prefixToBlock;
    const cp = await open('/fleet/mitigations');
    const { page } = cp;
    await page.getByRole('heading', { name: 'Mitigations' }).waitFor();
    await page.getByText('No prefix is blocked.').waitFor();
    const before = (await admin.get('/admin/nodes')).body as { node_id: string; lifecycle: string; current_generation: number }[];
    const active = before.filter((n) => n.lifecycle === 'active').map((n) => n.node_id);

    // Type the prefix and press Enter: the form previews a block.
    await page.locator('#mit-prefix').focus();
    await page.keyboard.type(prefix);
    await page.keyboard.press('Enter');
    const preview = page.getByRole('region', { name: `Preview: block ${prefix}` });
    await preview.waitFor();
    expect((await focused(page)).id).to.equal('prefix-preview-title');
    const text = (await preview.textContent()) ?? '';
    const published = before.filter((x) => x.lifecycle === 'active' && x.current_generation > 0);
    expect(published.length).to.be.greaterThan(1);
    for (const n of published) expect(text).to.include(`${n.node_id}: generation ${n.current_generation} → ${n.current_generation + 1}`);
    // A node never published carries the block into its first generation.
    for (const n of before.filter((x) => x.lifecycle === 'active' && x.current_generation === 0))
      expect(text).to.include(`${n.node_id}: no generation yet: its first publication carries it`);
    await shot(page, 'mitigations-preview');

    // Nothing is written by the preview.
    expect(((await admin.get('/admin/fleet/mitigations')).body as Mitigations).blocked_prefixes).to.deep.equal([]);

    await tabTo(page, new RegExp(`^Block ${prefix.replace(/[./]/g, '\\$&')}`));
    await page.keyboard.press('Enter');
    await confirmByKeyboard(page, new RegExp(`Block ${prefix.replace(/[./]/g, '\\$&')}`));
    await page.locator('#mit-notice').waitFor();
    expect(await page.locator('#mit-notice').textContent()).to.include(`${prefix} blocked`);

    const blocked = ((await admin.get('/admin/fleet/mitigations')).body as Mitigations).blocked_prefixes;
    expect(blocked.map((b) => b.prefix)).to.deep.equal([prefix]);
    expect(blocked[0].nodes).to.deep.equal([...active].sort());
    const after = (await admin.get('/admin/nodes')).body as { node_id: string; current_generation: number }[];
    for (const n of published) expect(after.find((a) => a.node_id === n.node_id)?.current_generation, n.node_id).to.equal(n.current_generation + 1);

    // The table of what is in force offers the unblock; its preview lists the same nodes.
    const row = page.locator(`tr[data-prefix="${prefix}"]`);
    await row.waitFor();
    await row.getByRole('button', { name: `Preview unblocking ${prefix}` }).focus();
    await page.keyboard.press('Enter');
    const unblockPreview = page.getByRole('region', { name: `Preview: unblock ${prefix}` });
    await unblockPreview.waitFor();
    expect(await unblockPreview.textContent()).to.include('Afterwards blocked on: no node');
    await tabTo(page, new RegExp(`^Unblock ${prefix.replace(/[./]/g, '\\$&')}`));
    await page.keyboard.press('Enter');
    await confirmByKeyboard(page, /Unblock/);
    await page.getByText(`${prefix} unblocked`).waitFor();
    expect(((await admin.get('/admin/fleet/mitigations')).body as Mitigations).blocked_prefixes).to.deep.equal([]);
    await page.getByText('No prefix is blocked.').waitFor();
    cp.assertClean();
    await cp.close();
  });

  it('previews and disables, then enables, a peer AS (sessions and generations named before the write)', async () => {
    const asn = f.peerAsnToDisable;
    const cp = await open('/fleet/mitigations');
    const { page } = cp;
    await page.locator('#mit-asn').fill(String(asn));
    await page.getByRole('button', { name: 'Preview disable' }).click();
    const preview = page.getByRole('region', { name: `Preview: disable AS${asn}` });
    await preview.waitFor();
    const text = (await preview.textContent()) ?? '';
    expect(text).to.match(/session\(s\) go down/);
    expect(text).to.include('core-ams-1').and.include('edge-lon-1');
    await page.getByRole('button', { name: `Disable AS${asn}…` }).click();
    await page.locator('dialog.confirm[open] [data-confirm]').click();
    await page.getByText(`AS${asn} disabled`).waitFor();
    const disabled = (await admin.get('/admin/fleet/mitigations')).body as { disabled_sessions: { remote_asn: number; by_mitigation: boolean }[] };
    expect(disabled.disabled_sessions.filter((s) => s.remote_asn === asn && s.by_mitigation)).to.have.length.at.least(2);

    await page.getByRole('button', { name: `Preview enabling AS${asn}` }).click();
    await page.getByRole('region', { name: `Preview: enable AS${asn}` }).waitFor();
    await page.getByRole('button', { name: `Enable AS${asn}…` }).click();
    await page.locator('dialog.confirm[open] [data-confirm]').click();
    await page.getByText(`AS${asn} enabled`).waitFor();
    const after = (await admin.get('/admin/fleet/mitigations')).body as { disabled_sessions: { remote_asn: number }[] };
    expect(after.disabled_sessions.filter((s) => s.remote_asn === asn)).to.deep.equal([]);
    // The flap pages link here with the culprit filled in and the keyboard on it.
    await page.goto(`${f.url}/console/fleet/mitigations?asn=${asn}`);
    await page.waitForFunction(() => document.activeElement?.id === 'mit-asn');
    expect(await page.locator('#mit-asn').inputValue()).to.equal(String(asn));
    // A preview of an AS without sessions says the server's words.
    await page.locator('#mit-asn').fill('4242429999');
    await page.getByRole('button', { name: 'Preview disable' }).click();
    await page.getByRole('alert').filter({ hasText: 'no bgp sessions with remote_asn 4242429999' }).waitFor();
    cp.assertClean();
    await cp.close();
  });

  it('approves a registration by keyboard (with a note), and rejects another after a confirmation', async () => {
    const regs = (await admin.get('/admin/registrations')).body.registrations as { registration_id: string; node_id: string; status: string }[];
    const toApprove = regs.find((r) => r.registration_id === f.registrations.approve)!;
    const toReject = regs.find((r) => r.registration_id === f.registrations.reject)!;
    expect(toApprove.status).to.equal('pending');
    const cp = await open('/fleet/registrations');
    const { page } = cp;
    await page.getByRole('heading', { name: 'Registrations' }).waitFor();
    await page.getByRole('button', { name: `Approve ${toApprove.node_id}` }).focus();
    await page.keyboard.press('Enter');
    const form = page.getByRole('form', { name: `Approve the registration of ${toApprove.node_id}` });
    await form.waitFor();
    expect(await form.textContent()).to.include(`No node ${toApprove.node_id} exists yet`);
    expect((await focused(page)).id).to.equal('reg-note');
    await page.keyboard.type('racked by the keyboard spec');
    await page.keyboard.press('Tab');
    expect((await focused(page)).text).to.equal('Approve registration');
    await page.keyboard.press('Enter');
    await page.getByText(`Registration of ${toApprove.node_id} approved.`).waitFor();
    const approved = (
      (await admin.get('/admin/registrations?status=approved')).body.registrations as { registration_id: string; note: string; decided_by: string }[]
    ).find((r) => r.registration_id === toApprove.registration_id);
    expect(approved?.note).to.equal('racked by the keyboard spec');
    expect(approved?.decided_by).to.be.a('string').and.not.equal('');

    await page.getByRole('button', { name: `Reject ${toReject.node_id}` }).click();
    await page.getByRole('button', { name: 'Reject registration' }).click();
    const dialog = page.locator('dialog.confirm[open]');
    await dialog.waitFor();
    expect(await dialog.textContent()).to.include('refused (403)');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(
      ((await admin.get('/admin/registrations?status=pending')).body.registrations as { registration_id: string }[]).map((r) => r.registration_id),
    ).to.include(toReject.registration_id);
    await page.getByRole('button', { name: 'Reject registration' }).click();
    await page.locator('dialog.confirm[open] [data-confirm]').click();
    await page.getByText(`Registration of ${toReject.node_id} rejected.`).waitFor();
    await eventually(async () => {
      const rejected = (await admin.get('/admin/registrations?status=rejected')).body.registrations as { registration_id: string }[];
      expect(rejected.map((r) => r.registration_id)).to.include(toReject.registration_id);
      return true;
    });
    await shot(page, 'registrations-decided');
    cp.assertClean();
    await cp.close();
  });

  it('creates an enrollment token showing its secret once, and revokes it after a confirmation', async () => {
    const cp = await open('/fleet/enrollment');
    const { page } = cp;
    await page.getByRole('heading', { name: 'Enrollment tokens' }).waitFor();
    await page.getByLabel('Node').selectOption(f.nodes.offline);
    await page.getByLabel('Description').fill('spare box');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = await page.locator('#secret').inputValue();
    expect(secret.length).to.be.greaterThan(20);
    await page.waitForFunction(() => document.activeElement?.id === 'secret');
    const listed = (await admin.get('/admin/enrollment-tokens')).body as { token_id: string; description: string | null; node_id: string | null }[];
    const mine = listed.find((t) => t.description === 'spare box')!;
    expect(mine.node_id).to.equal(f.nodes.offline);
    expect(JSON.stringify(listed)).to.not.include(secret);
    await shot(page, 'enrollment-created');
    await page.getByRole('button', { name: `Revoke enrollment token ${mine.token_id}` }).click();
    const dialog = page.locator('dialog.confirm[open]');
    expect(await dialog.textContent()).to.include(`for node ${f.nodes.offline}`);
    await dialog.locator('[data-confirm]').click();
    await page.locator('#secret').waitFor({ state: 'detached' });
    const left = (await admin.get('/admin/enrollment-tokens')).body as { token_id: string }[];
    expect(left.map((t) => t.token_id)).to.not.include(mine.token_id);
    cp.assertClean();
    await cp.close();
  });

  it('adds a DNS record and deletes it after a confirmation; a bad record shows the server detail at the field', async () => {
    const { groupId, zoneId, zone } = f.dns;
    const cp = await open(`/fleet/dns?group=${groupId}&zone=${zoneId}`);
    const { page } = cp;
    await page.getByRole('heading', { name: `Records of ${zone}` }).waitFor();
    await page.locator('#r-name').fill('mail');
    await page.locator('#r-type').selectOption('A');
    await page.locator('#r-content').fill('not-an-address');
    await page.getByRole('button', { name: 'Add record' }).click();
    await page.getByRole('alert').first().waitFor();
    expect(await page.locator('#r-content').getAttribute('aria-invalid')).to.equal('true');
    await page.locator('#r-content').fill('172.20.9.80');
    await page.getByRole('button', { name: 'Add record' }).click();
    await page.getByText('Record mail A added.').waitFor();
    const records = (await admin.get(`/admin/dns-groups/${groupId}/zones/${zoneId}/records`)).body as { id: number; name: string; content: string }[];
    const mail = records.find((r) => r.name === 'mail')!;
    expect(mail.content).to.equal('172.20.9.80');
    await page.getByRole('button', { name: 'Delete record mail A' }).click();
    const dialog = page.locator('dialog.confirm[open]');
    expect(await dialog.textContent()).to.include(`leaves zone ${zone}`);
    await dialog.locator('[data-confirm]').click();
    await page.getByText('Record mail A deleted.').waitFor();
    const left = (await admin.get(`/admin/dns-groups/${groupId}/zones/${zoneId}/records`)).body as { id: number }[];
    expect(left.map((r) => r.id)).to.not.include(mail.id);
    cp.assertClean([/422/]);
    await cp.close();
  });

  it('creates a DNS group with a forward and a zone, then deletes the group after a confirmation naming what goes', async () => {
    const cp = await open('/fleet/dns');
    const { page } = cp;
    await page.getByRole('heading', { name: 'New group' }).waitFor();
    await page.locator('#g-name').fill('lab-dns');
    await page.locator('#g-bind').fill('172.20.9.54');
    await page.locator('#g-fwd').fill('dn42 172.20.0.53 172.23.0.53');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.getByText('Group lab-dns created.').waitFor();
    const groups = (await admin.get('/admin/dns-groups')).body as { id: number; name: string; bind_addresses: string[]; forwards: unknown[] }[];
    const lab = groups.find((g) => g.name === 'lab-dns')!;
    expect(lab.bind_addresses).to.deep.equal(['172.20.9.54']);
    expect(lab.forwards).to.deep.equal([{ zone: 'dn42', upstreams: ['172.20.0.53', '172.23.0.53'] }]);
    await page.waitForURL(new RegExp(`/console/fleet/dns\\?group=${lab.id}$`));
    await page.locator('#z-name').fill('lab.dn42');
    await page.getByRole('button', { name: 'Create zone' }).click();
    await page.getByText('Zone lab.dn42 created.').waitFor();
    await page.getByRole('heading', { name: 'Records of lab.dn42' }).waitFor();
    await page.getByRole('button', { name: 'Delete group…' }).click();
    const dialog = page.locator('dialog.confirm[open]');
    expect(await dialog.textContent()).to.include('its 1 zone(s) and their records are deleted');
    await dialog.locator('[data-confirm]').click();
    await page.getByText('Group lab-dns deleted.').waitFor();
    const left = (await admin.get('/admin/dns-groups')).body as { name: string }[];
    expect(left.map((g) => g.name)).to.not.include('lab-dns');
    cp.assertClean();
    await cp.close();
  });

  it('uploads a release (multipart), refuses a bad file name with the server detail, and sets the target after a confirmation', async () => {
    const cp = await open('/fleet/releases');
    const { page } = cp;
    await page.getByRole('heading', { name: 'Rollout by node' }).waitFor();
    await page.locator('#rel-version').fill('1.0.230');
    await page.locator('#rel-files').setInputFiles([{ name: 'agent.zip', mimeType: 'application/zip', buffer: Buffer.from('not a release') }]);
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByRole('alert').filter({ hasText: 'invalid file name: "agent.zip"' }).waitFor();
    expect(await page.locator('#rel-files').getAttribute('aria-invalid')).to.equal('true');
    await page
      .locator('#rel-files')
      .setInputFiles([{ name: 'dn42-agent-1.0.230.tgz', mimeType: 'application/gzip', buffer: Buffer.from('release 1.0.230 bytes') }]);
    await page.getByRole('button', { name: 'Upload' }).click();
    await page.getByText('Release 1.0.230 uploaded (1 file)').waitFor();
    expect(((await admin.get('/admin/agent-releases')).body as { versions: string[] }).versions).to.include('1.0.230');

    await page.locator('#target-version').selectOption('1.0.230');
    await page.getByRole('button', { name: 'Set target…' }).click();
    const dialog = page.locator('dialog.confirm[open]');
    expect(await dialog.textContent()).to.include(`moves from ${f.releases.target} to 1.0.230`);
    await dialog.locator('[data-confirm]').click();
    await page.getByText('Target set to 1.0.230').waitFor();
    expect(((await admin.get('/admin/agent-releases')).body as { target: string }).target).to.equal('1.0.230');
    await page.getByText('0 / 5').waitFor();
    cp.assertClean([/422/]);
    await cp.close();
  });

  it('edits a node autopeering policy (field errors at the field), and asks before closing an open node', async () => {
    const cp = await open('/fleet/autopeering');
    const { page } = cp;
    await page.getByRole('button', { name: 'Edit the autopeering policy of edge-fra-1' }).click();
    await page.getByLabel('Offered in the portal').check();
    await page.getByLabel('Dial-in host').fill('edge-fra-1.nodes.example.net');
    await page.getByLabel('Country code').fill('d');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByRole('alert').first().waitFor();
    expect(await page.getByLabel('Country code').getAttribute('aria-invalid')).to.equal('true');
    await page.getByLabel('Country code').fill('DE');
    await page.getByLabel('Peer cap').fill('8');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Policy of edge-fra-1 saved: open to autopeering.').waitFor();
    const rows = (await admin.get('/admin/autopeering/nodes')).body.nodes as { node_id: string; policy: Record<string, unknown> }[];
    expect(rows.find((r) => r.node_id === 'edge-fra-1')?.policy).to.include({
      enabled: true,
      endpoint_host: 'edge-fra-1.nodes.example.net',
      country_code: 'DE',
      max_sessions: 8,
    });

    await page.getByRole('button', { name: 'Edit the autopeering policy of edge-fra-1' }).click();
    await page.getByLabel('Offered in the portal').uncheck();
    await page.getByRole('button', { name: 'Save policy' }).click();
    const dialog = page.locator('dialog.confirm[open]');
    expect(await dialog.textContent()).to.include('new requests for it are refused (404)');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    const still = (await admin.get('/admin/autopeering/nodes')).body.nodes as { node_id: string; policy: { enabled: boolean } }[];
    expect(still.find((r) => r.node_id === 'edge-fra-1')?.policy.enabled).to.equal(true);
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.locator('dialog.confirm[open] [data-confirm]').click();
    await page.getByText('Policy of edge-fra-1 saved: closed.').waitFor();
    cp.assertClean([/422/]);
    await cp.close();
  });

  it('searches the audit log and pages to older entries with before_id', async () => {
    // Enough writes for more than one page of 50.
    let total = ((await admin.get('/ui/audit?limit=500')).body.entries as unknown[]).length;
    for (let i = 0; total < 60; i++, total++) {
      const res = await admin.patch('/admin/autopeering/nodes/edge-lon-1', { notes: `audit filler ${i}` });
      expectResponse(res).status(200);
    }
    const cp = await open('/audit');
    const { page } = cp;
    const rows = page.locator('tbody tr[data-id]');
    await eventually(async () => (await rows.count()) === 50);
    const firstPage = (await admin.get('/ui/audit?limit=50')).body.entries as { id: number }[];
    expect(await rows.first().getAttribute('data-id')).to.equal(String(firstPage[0].id));
    await page.getByRole('button', { name: 'Older' }).focus();
    await page.keyboard.press('Enter');
    await eventually(async () => (await rows.count()) > 50);
    const older = (await admin.get(`/ui/audit?limit=50&before_id=${firstPage[49].id}`)).body.entries as { id: number }[];
    expect(await rows.nth(50).getAttribute('data-id')).to.equal(String(older[0].id));
    const ids = (await rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute('data-id'))))) as number[];
    expect(ids).to.deep.equal([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).to.equal(ids.length);

    await page.locator('#audit-q').focus();
    await page.keyboard.type('autopeering/nodes');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/console\/audit\?q=autopeering%2Fnodes$/);
    await eventually(async () => {
      const paths = await page.locator('tbody tr[data-id] .path').allTextContents();
      expect(paths.length).to.be.greaterThan(0);
      for (const p of paths) expect(p).to.include('autopeering/nodes');
      return true;
    });
    const searched = (await admin.get('/ui/audit?limit=50&q=autopeering/nodes')).body.entries as { id: number }[];
    expect(await rows.count()).to.equal(searched.length);
    await shot(page, 'audit-search');
    cp.assertClean();
    await cp.close();
  });

  it('works against a second control instance on the same database: a block written there is in force on the first', async () => {
    const second = await f.startSecondInstance();
    const cp = await openPage(browser, { viewport: 'desktop' });
    await signInWithToken(cp.page, second.url, f.adminToken);
    await cp.page.goto(`${second.url}/console/fleet/mitigations?prefix=${encodeURIComponent('172.23.99.0/24')}`);
    const { page } = cp;
    await page.waitForFunction(() => document.activeElement?.id === 'mit-prefix');
    await page.keyboard.press('Enter');
    await page.getByRole('region', { name: 'Preview: block 172.23.99.0/24' }).waitFor();
    await page.getByRole('button', { name: 'Block 172.23.99.0/24…' }).click();
    await page.locator('dialog.confirm[open] [data-confirm]').click();
    await page.getByText('172.23.99.0/24 blocked').waitFor();
    const onFirst = (await admin.get('/admin/fleet/mitigations')).body as Mitigations;
    expect(onFirst.blocked_prefixes.map((b) => b.prefix)).to.include('172.23.99.0/24');
    cp.assertClean();
    await cp.close();
    const first = await open('/fleet/mitigations');
    await first.page.locator('tr[data-prefix="172.23.99.0/24"]').waitFor();
    first.assertClean();
    await first.close();
    expectResponse(await admin.post('/admin/fleet/mitigations/prefix-unblock', { prefix: '172.23.99.0/24' })).status(200);
    await second.close();
  });

  describe('walks every page at desktop and phone width', () => {
    const pages = () => [
      { name: 'dns', path: `/fleet/dns?group=${f.dns.groupId}&zone=${f.dns.zoneId}`, ready: `Records of ${f.dns.zone}` },
      { name: 'enrollment', path: '/fleet/enrollment', ready: 'Tokens' },
      { name: 'registrations', path: '/fleet/registrations', ready: 'Registrations' },
      { name: 'releases', path: '/fleet/releases', ready: 'Rollout by node' },
      { name: 'autopeering', path: '/fleet/autopeering', ready: 'Requests' },
      { name: 'mitigations', path: '/fleet/mitigations', ready: 'In force' },
      { name: 'audit', path: '/audit', ready: 'Audit' },
      { name: 'registry', path: `/registry?asn=${f.peerAsns.beta}&mntner=BETA-MNT`, ready: 'By maintainer' },
    ];

    for (const viewport of ['desktop', 'phone'] as const) {
      it(`renders each page at ${viewport} width without errors`, async () => {
        for (const p of pages()) {
          const cp = await open(p.path, viewport);
          const { page } = cp;
          await page.getByRole('heading', { name: p.ready, exact: true }).waitFor();
          await page.waitForFunction(() => !document.querySelector('.loading'));
          // Nothing wider than the screen (tables scroll inside their own box).
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
          expect(overflow, `${p.name} horizontal overflow at ${viewport}`).to.be.at.most(0);
          await shot(page, `${p.name}-${viewport}`);
          cp.assertClean(p.name === 'registry' ? [/404/] : []);
          await cp.close();
        }
      });
    }

    it('reads in the dark theme', async () => {
      const cp = await open('/fleet/releases', 'desktop', 'dark');
      await cp.page.getByRole('heading', { name: 'Rollout by node' }).waitFor();
      await cp.page.waitForFunction(() => !document.querySelector('.loading'));
      const bg = await cp.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      expect(bg).to.equal('rgb(18, 21, 28)');
      await shot(cp.page, 'releases-dark');
      cp.assertClean();
      await cp.close();
    });

    it('looks up an ASN and a maintainer in the registry, and names an unknown ASN with the server detail', async () => {
      const cp = await open(`/registry`);
      const { page } = cp;
      await page.locator('#lookup-asn').fill(String(f.peerAsns.beta));
      await page.locator('#lookup-asn').press('Enter');
      await page.getByRole('heading', { name: /BETA/ }).waitFor();
      await page.getByRole('link', { name: /MNT/ }).first().click();
      await page.waitForURL(/mntner=/);
      await page.getByRole('heading', { name: 'BETA-MNT', exact: true }).waitFor();
      await page.locator('#lookup-asn').fill('4242429999');
      await page.locator('#lookup-asn').press('Enter');
      await page.getByRole('alert').filter({ hasText: 'AS4242429999 not found in the registry' }).waitFor();
      cp.assertClean([/404/]);
      await cp.close();
    });
  });
});
