import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import { WEB_BUILD_DIR } from '../../web/files.js';
import { buildWeb } from '../../web/build.js';
import { issueAgentToken } from '../support/agents.js';
import { agentSocket } from '../support/agent-socket.js';
import { api } from '../support/http.js';
import { startAgentProcess, type AgentProcess } from '../http/control/probes/agent-process.js';
import { launchChromium, skipWithoutChromium } from './authorize-support.js';
import { openPage, shot, signInWithToken, startConsoleFleet, type ConsoleFleet, type ConsolePage } from './console-support.js';

/** A WireGuard public key the schema accepts. */
const PEER_KEY = 'zQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';

interface Generation {
  generation: number;
  reason: string;
  rollback_of: number | null;
}

describe('Console node configuration tabs: peerings, tuning, DNS group, generations, probes, logs, tokens', function () {
  this.timeout(240_000);
  let f: ConsoleFleet;
  let browser: Browser;
  let agent: AgentProcess;
  let node: string;
  let admin: ReturnType<typeof api>;
  const pages: ConsolePage[] = [];

  before(async function () {
    this.timeout(240_000);
    skipWithoutChromium(this);
    if (!existsSync(join(WEB_BUILD_DIR, 'console', 'index.html'))) await buildWeb(['console']);
    f = await startConsoleFleet();
    node = f.nodes.core;
    admin = api(f.api, { token: f.adminToken });
    // The node's agent: the probe specs' stand-in, over the real agent WebSocket, answering probes and log views.
    const { token } = await issueAgentToken(f.url, f.adminToken, node, { agent_id: 'console-spec-agent' });
    agent = await startAgentProcess(f.url, node, token);
    browser = await launchChromium(['--disable-gpu', '--disable-background-networking', '--disable-component-update']);
  });
  afterEach(async () => {
    for (const p of pages.splice(0)) await p.close();
  });
  after(async () => {
    await agent?.stop();
    await browser?.close();
    await f?.close();
  });

  async function open(viewport: 'desktop' | 'phone' = 'desktop', colorScheme: 'light' | 'dark' = 'light'): Promise<ConsolePage> {
    const p = await openPage(browser, { viewport, colorScheme });
    pages.push(p);
    await signInWithToken(p.page, f.url, f.adminToken);
    return p;
  }
  const tab = (page: Page, name: string) => page.goto(`${f.url}/console/nodes/${node}/${name}`);
  /** Focuses a field and replaces its text by typing. */
  async function typeInto(page: Page, selector: string, text: string) {
    await page.locator(selector).focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.type(text);
  }
  const focusedId = (page: Page) => page.evaluate(() => document.activeElement?.id ?? '');
  const generations = async () => (await admin.get(`/admin/nodes/${node}/generations`)).body.generations as Generation[];

  it('provisions a peering by keyboard: the server’s complaint shows at its field, then the new generation', async () => {
    const before = (await generations())[0].generation;
    const p = await open();
    const { page } = p;
    await tab(page, 'peerings');
    await page.getByRole('button', { name: 'New peering' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#pp-peering-name').waitFor();
    expect(await focusedId(page)).to.equal('pp-peering-name');
    await page.keyboard.type('zeta-as');
    await page.keyboard.press('Tab');
    expect(await focusedId(page)).to.equal('pp-peering-remote_asn');
    await page.keyboard.type('4242420099');
    await typeInto(page, '#pp-interfaces-0-name', 'dn42_zeta');
    await typeInto(page, '#pp-interfaces-0-listen_port', '51829');
    await typeInto(page, '#pp-interfaces-0-public_key', 'not-a-wireguard-key');
    await typeInto(page, '#pp-interfaces-0-endpoint', 'zeta.peer.example.net:20099');
    await typeInto(page, '#pp-interfaces-0-peer_link_local', 'fe80::99');
    await typeInto(page, '#pp-sessions-0-name', 'dn42_zeta_v6');
    await typeInto(page, '#pp-sessions-0-neighbor_address', 'fe80::99');
    // Leaving the interface name filled the session's interface.
    expect(await page.locator('#pp-sessions-0-interface').inputValue()).to.equal('dn42_zeta');
    await page.keyboard.press('Enter');

    // 422 from the schema: shown at the public key field, which gets the focus.
    const key = page.locator('#pp-interfaces-0-public_key');
    await page.locator('#pp-interfaces-0-public_key[aria-invalid="true"]').waitFor();
    expect(await key.getAttribute('aria-describedby')).to.include('pp-interfaces-0-public_key-err');
    expect(await page.locator('#pp-interfaces-0-public_key-err').textContent()).to.match(/pattern|match/i);
    expect(await page.getByRole('alert').first().textContent()).to.include('(HTTP 422)');
    expect(await focusedId(page)).to.equal('pp-interfaces-0-public_key');
    expect((await admin.get(`/admin/nodes/${node}/peerings`)).body.map((x: { name: string }) => x.name)).to.not.include('zeta-as');
    await page.keyboard.press('Control+A');
    await page.keyboard.type(PEER_KEY);
    await page.keyboard.press('Enter');

    const outcome = page.locator('#peerings-outcome');
    await outcome.waitFor({ timeout: 10_000 }).catch(async (err) => {
      throw new Error(`${err.message}; alerts: ${await page.getByRole('alert').allTextContents()}`);
    });
    const text = (await outcome.textContent()) ?? '';
    const published = Number(/generation (\d+) published/.exec(text)?.[1]);
    expect(text).to.include('Peering zeta-as provisioned');
    expect(published).to.be.greaterThan(before);
    await shot(page, 'node-peerings-provisioned');

    // Over HTTP: the peering with its interface and session, and the generation it published.
    const full = (await admin.get(`/admin/nodes/${node}/peerings/full`)).body as { name: string; remote_asn: number; interfaces: any[]; bgp_sessions: any[] }[];
    const zeta = full.find((x) => x.name === 'zeta-as');
    expect(zeta, 'the provisioned peering').to.not.equal(undefined);
    expect(zeta!.remote_asn).to.equal(4242420099);
    expect(zeta!.interfaces.map((i) => [i.name, i.spec.listen_port, i.spec.peer.public_key])).to.deep.equal([['dn42_zeta', 51829, PEER_KEY]]);
    expect(zeta!.bgp_sessions.map((s) => [s.name, s.spec.neighbor_address, s.spec.interface, s.remote_asn])).to.deep.equal([
      ['dn42_zeta_v6', 'fe80::99', 'dn42_zeta', 4242420099],
    ]);
    const after = await generations();
    expect(after[0].generation).to.equal(published);
    const state = (await admin.get(`/admin/nodes/${node}/generations/${published}`)).body.state;
    expect(JSON.stringify(state)).to.include('dn42_zeta_v6');
    // The new row is in the table.
    await page.getByRole('row', { name: 'Peering zeta-as' }).waitFor();
    p.assertClean([/status of 422/]);
  });

  it('rolls back a generation by keyboard, confirming in the dialog that names it', async () => {
    const list = await generations();
    const current = list[0].generation;
    const target = f.generations[0];
    const p = await open();
    const { page } = p;
    await tab(page, 'generations');
    const button = page.getByRole('button', { name: `Roll back to generation ${target}`, exact: true });
    await button.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    const said = (await dialog.textContent()) ?? '';
    expect(said).to.include(`Roll back node ${node} to generation ${target}?`);
    expect(said).to.include(`as generation ${current + 1}`);
    expect(said).to.match(new RegExp(`Takes \\d+ fields? of generation ${current} back: removes bgp sessions › name=`));
    await shot(page, 'node-generations-rollback-confirm');
    // Cancel has the focus; Tab reaches the confirm button.
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal('Cancel');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal(`Roll back to generation ${target}`);
    await page.keyboard.press('Enter');

    const outcome = page.locator('#generations-outcome');
    await outcome.waitFor();
    expect(await outcome.textContent()).to.include(`Rolled back to generation ${target}: generation ${current + 1} published`);
    const after = await generations();
    expect(after[0]).to.deep.include({ generation: current + 1, rollback_of: target, reason: `rollback to generation ${target}` });
    const [was, now] = await Promise.all([
      admin.get(`/admin/nodes/${node}/generations/${target}`),
      admin.get(`/admin/nodes/${node}/generations/${current + 1}`),
    ]);
    // The node's interfaces and sessions are the target's again.
    for (const part of ['interfaces', 'bgp_sessions']) expect(now.body.state[part], part).to.deep.equal(was.body.state[part]);
    // The new generation's changes are shown, in words.
    await page.getByRole('heading', { name: `Generation ${current + 1}` }).waitFor();
    await page.locator('.diff li').first().waitFor();
    await shot(page, 'node-generations-rolled-back');
    p.assertClean();
  });

  it('runs a ping probe by keyboard and reads its output as the agent streams it', async () => {
    const p = await open();
    const { page } = p;
    await tab(page, 'probes');
    await page.locator('#probe-target').focus();
    await page.keyboard.type('172.20.0.53');
    await page.keyboard.press('Enter');
    const output = page.locator('#probe-output');
    await page.locator('[data-status="done"]').waitFor();
    const text = (await output.textContent()) ?? '';
    expect(text).to.include('PING 172.20.0.53 count 4');
    expect(text).to.match(/64 bytes from 172\.20\.0\.53: icmp_seq=1 ttl=64 time=0\.042 ms/);
    expect(await page.getByRole('status').filter({ hasText: 'Finished.' }).count()).to.equal(1);
    // The agent received the probe and streamed it to its end.
    await agent.printed(/probe-stream\/[0-9a-f-]+ closed 1000/);
    await shot(page, 'node-probes-ping');

    // A target outside the ranges: the server's detail at the field.
    await typeInto(page, '#probe-target', '8.8.8.8');
    await page.keyboard.press('Enter');
    await page.locator('#probe-target[aria-invalid="true"]').waitFor();
    expect(await page.getByRole('alert').textContent()).to.include('invalid target 8.8.8.8');
    p.assertClean([/status of 422/]);
  });

  it('cancels a probe and stops a log tail the agent has not finished: the page stops reading and says so', async () => {
    // edge-fra-1's agent holds its socket but never answers the probe.
    const other = f.nodes.flapping;
    const { token } = await issueAgentToken(f.url, f.adminToken, other);
    const holder = agentSocket(f.url, `ws/${other}`, token);
    try {
      await holder.next('hello');
      const p = await open();
      const { page } = p;
      await page.goto(`${f.url}/console/nodes/${other}/probes`);
      await page.getByRole('radio', { name: 'Traceroute' }).focus();
      await page.keyboard.press('Space');
      await typeInto(page, '#probe-target', '172.20.9.1');
      await page.keyboard.press('Enter');
      const request = await holder.next('probe_request', 10_000);
      expect(request.spec).to.deep.include({ tool: 'traceroute', target: '172.20.9.1', count: 4, resolve: true });
      await page.locator('[data-status="running"]').waitFor();
      expect(await page.locator('#probe-output').textContent()).to.include('Waiting for the agent');
      await page.getByRole('button', { name: 'Cancel' }).focus();
      await page.keyboard.press('Enter');
      await page.locator('[data-status="cancelled"]').waitFor();
      expect(await page.getByRole('status').filter({ hasText: 'Stopped reading' }).count()).to.equal(1);
      expect(await page.getByRole('button', { name: 'Run Traceroute' }).isEnabled()).to.equal(true);

      // A live log tail the agent holds open: Stop ends the reading.
      await page.goto(`${f.url}/console/nodes/${other}/logs`);
      await page.getByRole('button', { name: 'Start tail' }).focus();
      await page.keyboard.press('Enter');
      const logRequest = await holder.next('log_request', 10_000);
      expect(logRequest.spec).to.deep.include({ mode: 'tail', source: 'buffer', min_level: 'INFO', duration_seconds: 120 });
      await page.locator('[data-status="running"]').waitFor();
      await page.getByRole('button', { name: 'Stop' }).focus();
      await page.keyboard.press('Enter');
      await page.locator('[data-status="stopped"]').waitFor();
      p.assertClean();
    } finally {
      await holder.close();
    }
  });

  it('edits a peering with PUT full and deletes one after confirming what goes away', async () => {
    const p = await open();
    const { page } = p;
    await tab(page, 'peerings');
    await page.getByRole('button', { name: 'Edit peering zeta-as' }).click();
    await page.locator('#pe-peering-remote_asn').waitFor();
    expect(await page.locator('#pe-peering-name').getAttribute('readonly')).to.not.equal(null);
    await typeInto(page, '#pe-peering-remote_label', 'Zeta Networks');
    await page.locator('#pe-sessions-0-link_latency').selectOption('3');
    await page.getByRole('button', { name: 'Add BGP session' }).click();
    await typeInto(page, '#pe-sessions-1-name', 'dn42_zeta_v4');
    await typeInto(page, '#pe-sessions-1-neighbor_address', '172.23.99.1');
    await page.locator('#pe-sessions-1-interface').fill('');
    await page.getByRole('button', { name: 'Save peering zeta-as' }).click();
    await page.locator('#peerings-outcome').filter({ hasText: 'Peering zeta-as saved' }).waitFor();
    const zeta = (await admin.get(`/admin/nodes/${node}/peerings/full`)).body.find((x: { name: string }) => x.name === 'zeta-as');
    expect(zeta.remote_label).to.equal('Zeta Networks');
    expect(zeta.bgp_sessions.map((s: any) => [s.name, s.spec.link_latency ?? null, s.spec.interface ?? null])).to.deep.equal([
      ['dn42_zeta_v6', 3, 'dn42_zeta'],
      ['dn42_zeta_v4', null, null],
    ]);
    // The interface's fields the form does not show are kept (its peer's endpoint, public key).
    expect(zeta.interfaces[0].spec.peer).to.deep.include({ public_key: PEER_KEY, endpoint: 'zeta.peer.example.net:20099' });

    await page.getByRole('button', { name: 'Delete peering zeta-as' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    const said = (await dialog.textContent()) ?? '';
    expect(said).to.include('Deletes its interface dn42_zeta.');
    expect(said).to.include('Deletes its BGP sessions dn42_zeta_v6, dn42_zeta_v4.');
    await dialog.getByRole('button', { name: 'Delete peering zeta-as' }).click();
    await page.locator('#peerings-outcome').filter({ hasText: 'Peering zeta-as deleted' }).waitFor();
    expect((await admin.get(`/admin/nodes/${node}/peerings`)).body.map((x: { name: string }) => x.name)).to.not.include('zeta-as');
    p.assertClean();
  });

  it('sets route tuning and a session’s link latency, changes the DNS group, issues and revokes a token', async () => {
    const p = await open();
    const { page } = p;
    await tab(page, 'tuning');
    await typeInto(page, '#tuning-med', '50');
    await page.getByRole('button', { name: 'Add rule' }).click();
    await typeInto(page, '#rule-0-prefix', 'not a prefix');
    await typeInto(page, '#rule-0-pref', '300');
    await page.getByRole('button', { name: 'Save route tuning' }).click();
    await page.locator('#rule-0-prefix[aria-invalid="true"]').waitFor();
    await typeInto(page, '#rule-0-prefix', '172.22.0.0/24');
    await page.getByRole('button', { name: 'Save route tuning' }).click();
    await page.getByText('Route tuning saved.').waitFor();
    const tuning = (await admin.get(`/ui/nodes/${node}/route-tuning`)).body;
    expect(tuning.cold_potato_med).to.equal(50);
    expect(tuning.route_local_pref).to.deep.equal([{ prefix: '172.22.0.0/24', local_pref: 300 }]);
    const session = tuning.sessions.find((s: { name: string }) => s.name === 'dn42_beta_v6');
    await page.locator(`#latency-${session.id}`).selectOption('2');
    await page.getByRole('button', { name: 'Save link latency of dn42_beta_v6' }).click();
    await page.getByText('Session dn42_beta_v6: link latency set to 2.').waitFor();
    expect((await admin.get(`/ui/nodes/${node}/route-tuning`)).body.sessions.find((s: { id: number }) => s.id === session.id).link_latency).to.equal(2);

    await tab(page, 'dns');
    await page.locator('#dns-group-choice').selectOption('');
    await page.getByRole('button', { name: 'Save membership' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await dialog.textContent()).to.include(`Node ${node} leaves DNS group anycast-dns and runs no DNS service.`);
    await dialog.getByRole('button', { name: 'Remove from anycast-dns' }).click();
    await page.getByText(`Node ${node} is in no DNS group now.`).waitFor();
    expect((await admin.get(`/admin/nodes/${node}`)).body.dns_group_id).to.equal(null);
    await page.locator('#dns-group-choice').selectOption(String(f.dns.groupId));
    await page.getByRole('button', { name: 'Save membership' }).click();
    await page.getByText(`Node ${node} is now a member of anycast-dns.`).waitFor();
    expect((await admin.get(`/admin/nodes/${node}`)).body.dns_group_id).to.equal(f.dns.groupId);

    await tab(page, 'tokens');
    await typeInto(page, '#token-agent', 'spare-agent');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const secret = await page.locator('#token-secret').inputValue();
    expect(secret).to.match(/^agt_[0-9a-f]+\.\S{20,}$/);
    const id = secret.split('.')[0];
    const listed = (await admin.get(`/admin/nodes/${node}/agent-tokens`)).body as { token: string; agent_id: string; revoked_at: string | null }[];
    expect(listed.find((t) => t.token === id)).to.deep.include({ agent_id: 'spare-agent', revoked_at: null });
    await shot(page, 'node-tokens-issued');
    // Rotate: the old one is revoked, its successor's secret shown once.
    await page.getByRole('button', { name: `Rotate token ${id}` }).click();
    await page
      .getByRole('dialog')
      .getByRole('button', { name: `Rotate ${id}` })
      .click();
    await page
      .getByRole('heading', { name: /^New agent token / })
      .filter({ hasNotText: id })
      .waitFor();
    const rotated = await page.locator('#token-secret').inputValue();
    const successor = rotated.split('.')[0];
    expect(successor).to.not.equal(id);
    const afterRotate = (await admin.get(`/admin/nodes/${node}/agent-tokens`)).body as { token: string; agent_id: string; revoked_at: string | null }[];
    expect(afterRotate.find((t) => t.token === id)!.revoked_at).to.be.a('string');
    expect(afterRotate.find((t) => t.token === successor)).to.deep.include({ agent_id: 'spare-agent', revoked_at: null });
    await page.getByRole('button', { name: `Revoke token ${successor}` }).click();
    await page
      .getByRole('dialog')
      .getByRole('button', { name: `Revoke ${successor}` })
      .click();
    await page.getByText(`Token ${successor} revoked.`).waitFor();
    expect((await admin.get(`/admin/nodes/${node}/agent-tokens`)).body.find((t: { token: string }) => t.token === successor).revoked_at).to.be.a('string');
    // The secret shown is gone once its token is revoked.
    expect(await page.locator('#token-secret').count()).to.equal(0);
    p.assertClean([/status of 422/]);
  });

  for (const viewport of ['desktop', 'phone'] as const) {
    it(`walks each tab at ${viewport} width, with screenshots`, async () => {
      const p = await open(viewport);
      const { page } = p;
      await tab(page, 'peerings');
      await page.getByRole('row', { name: 'Peering beta-as' }).waitFor();
      await shot(page, `node-peerings-${viewport}`);
      await page.getByRole('button', { name: 'New peering' }).click();
      await page.locator('#pp-peering-name').waitFor();
      await shot(page, `node-peerings-form-${viewport}`);

      await tab(page, 'tuning');
      await page.getByRole('heading', { name: 'Link latency' }).waitFor();
      await shot(page, `node-tuning-${viewport}`);

      await tab(page, 'dns');
      await page.getByRole('heading', { name: 'Change membership' }).waitFor();
      await shot(page, `node-dns-${viewport}`);

      await tab(page, 'generations');
      const first = f.generations[1];
      await page.getByRole('button', { name: `Changes of generation ${first}` }).click();
      await page.locator('.diff li').first().waitFor();
      await page.getByRole('button', { name: `Show desired state of generation ${first}` }).click();
      await page.getByLabel(`Desired state of generation ${first}`).waitFor();
      await shot(page, `node-generations-${viewport}`);

      await tab(page, 'probes');
      await page.getByRole('heading', { name: 'Output' }).waitFor();
      await shot(page, `node-probes-${viewport}`);

      await tab(page, 'logs');
      await page.locator('#log-mode').selectOption('snapshot');
      await page.getByRole('button', { name: 'Show snapshot' }).click();
      await page.locator('[data-status="done"]').waitFor();
      expect(await page.getByRole('log', { name: 'Log entries' }).textContent()).to.include('applied generation 3');
      await shot(page, `node-logs-${viewport}`);

      await tab(page, 'tokens');
      await page
        .getByRole('row', { name: /^Token agt_/ })
        .first()
        .waitFor();
      await shot(page, `node-tokens-${viewport}`);
      p.assertClean();
    });
  }

  it('reads in the dark theme (peerings with the provision form, generations)', async () => {
    const p = await open('desktop', 'dark');
    const { page } = p;
    await tab(page, 'peerings');
    await page.getByRole('button', { name: 'New peering' }).click();
    await page.locator('#pp-peering-name').waitFor();
    await shot(page, 'node-peerings-form-dark');
    await tab(page, 'logs');
    await page.getByRole('button', { name: 'Start tail' }).click();
    await page.locator('[data-status="done"]').waitFor();
    await shot(page, 'node-logs-dark');
    p.assertClean();
  });
});
