import { existsSync } from 'node:fs';
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { api, expectResponse } from '../support/http.js';
import { eventually } from '../support/wait.js';
import { addAccount, loginAs } from '../http/control/support.js';
import { launchChromium, skipWithoutChromium } from './authorize-support.js';
import {
  ensureConsoleBuilt,
  openPage,
  shot,
  signInWithToken,
  startConsoleFleet,
  TOKEN_KEY,
  type ConsoleFleet,
  type ControlInstance,
} from './console-support.js';

/** What each console view must answer non-empty from the seeded fleet; the same reads are asked of the second instance. */
async function views(base: string, token: string, f: ConsoleFleet) {
  const client = api(`${base}/control/v1`, { token });
  const get = async (path: string) => {
    const res = await client.get(path);
    expectResponse(res).status(200);
    return res.body;
  };
  const { core, flapping, sessionDown } = f.nodes;
  return {
    dashboard: await get('/ui/dashboard?range=24h&compare=1'),
    nodes: await get('/ui/nodes'),
    overview: await get(`/ui/nodes/${core}/overview`),
    prefixFlaps: await get('/ui/fleet/prefix-flaps?group=prefix'),
    bgpFlaps: await get('/ui/fleet/bgp-flaps'),
    alerts: await get('/ui/fleet/flap-alerts'),
    routing: await get(`/ui/nodes/${core}/routing/dashboard`),
    registrations: await get('/admin/registrations?status=pending'),
    generations: await get(`/admin/nodes/${core}/generations`),
    peeringIssues: await get('/ui/fleet/peering-issues'),
    sessionsFra: await get(`/ui/nodes/${flapping}/bgp-sessions/status`),
    sessionsNyc: await get(`/ui/nodes/${sessionDown}/bgp-sessions/status`),
    dnsGroups: await get('/admin/dns-groups'),
    records: await get(`/admin/dns-groups/${f.dns.groupId}/zones/${f.dns.zoneId}/records`),
    enrollment: await get('/admin/enrollment-tokens'),
    releases: await get('/admin/agent-releases'),
    autopeering: await get('/admin/autopeering/nodes'),
    audit: await get('/ui/audit'),
    names: await get(`/ui/registry/asn/${f.peerAsns.beta}`),
  };
}

/** Points of a series that carry a value. */
const measured = (points: { rx_bytes_per_sec: number | null }[]) => points.filter((p) => p.rx_bytes_per_sec !== null).length;

describe('Console fixture: a seeded fleet that every console view reads, on two instances', function () {
  this.timeout(120_000);
  let f: ConsoleFleet;
  let second: ControlInstance;
  let first: Awaited<ReturnType<typeof views>>;

  before(async function () {
    this.timeout(120_000);
    const t0 = Date.now();
    f = await startConsoleFleet({ reportEveryMs: 2_000 });
    console.log(`      seeded in ${Date.now() - t0} ms`);
    second = await f.startSecondInstance();
    first = await views(f.url, f.adminToken, f);
  });
  after(async () => f?.close());

  it('answers the seeded fleet at the wall clock: dashboard with 24 h of traffic and the previous window, nodes online with geo', () => {
    const { dashboard, nodes } = first;
    expect(Math.abs(Date.parse(dashboard.generated_at) - Date.now())).to.be.below(60_000);
    expect(dashboard.traffic.points).to.have.length(144);
    expect(measured(dashboard.traffic.points), 'current window').to.be.at.least(140);
    expect(measured(dashboard.traffic.points_previous), 'previous window').to.be.at.least(140);
    expect(dashboard.peering_issues).to.be.an('array').that.is.not.empty;
    expect(dashboard.routing.origins).to.be.an('array').that.is.not.empty;
    const rows = (nodes.nodes ?? nodes) as Record<string, any>[];
    expect(rows.map((n) => n.node_id)).to.have.members(f.nodes.all);
    for (const row of rows) expect(row.geo, row.node_id).to.be.an('object').with.property('city');
    const online = rows.filter((r) => JSON.stringify(r.liveness ?? r).includes('online')).map((r) => r.node_id);
    expect(online).to.include.members([f.nodes.core, f.nodes.flapping, f.nodes.drift, f.nodes.sessionDown]);
  });

  it('answers the node overview, routing dashboard with RPKI states and the generations to roll back', () => {
    expect(first.overview).to.be.an('object').that.is.not.empty;
    expect(JSON.stringify(first.overview)).to.include(f.nodes.core);
    const routing = JSON.stringify(first.routing);
    for (const state of ['valid', 'invalid', 'not_found']) expect(routing).to.include(state);
    expect(f.generations.length).to.be.at.least(3);
    const listed = (first.generations.generations as { generation: number }[]).map((g) => g.generation);
    expect(listed).to.include.members(f.generations);
  });

  it('answers flaps: the prefix flapping with an open alert, the session flapping, a session down', () => {
    expect(JSON.stringify(first.prefixFlaps)).to.include(f.prefixToBlock);
    expect(JSON.stringify(first.prefixFlaps)).to.include('"flapping":true');
    expect(JSON.stringify(first.bgpFlaps)).to.include(f.flappingSession.name);
    const alerts = first.alerts.alerts as { kind: string; active: boolean; prefix: string | null; name: string | null }[];
    expect(alerts.filter((a) => a.active).map((a) => a.kind)).to.include.members(['prefix', 'session']);
    expect(alerts.find((a) => a.kind === 'prefix')?.prefix).to.equal(f.prefixToBlock);
    const fra = Object.fromEntries((first.sessionsFra.sessions as { name: string }[]).map((s) => [s.name, s]));
    expect(fra[f.flappingSession.name]).to.include({ flapping: true });
    const nyc = (first.sessionsNyc.sessions as { name: string; health: string }[]).find((s) => s.name === 'dn42_epsilon_v4');
    expect(nyc?.health).to.equal('down');
    expect(first.peeringIssues).to.not.be.empty;
  });

  it('answers fleet data: pending registrations, DNS, enrollment token, releases, autopeering, audit, registry names', () => {
    const pending = first.registrations.registrations as { registration_id: string }[];
    expect(pending.map((r) => r.registration_id)).to.have.members([f.registrations.approve, f.registrations.reject]);
    expect(JSON.stringify(first.dnsGroups)).to.include('anycast-dns');
    expect(first.records).to.have.length(f.dns.recordIds.length);
    expect(JSON.stringify(first.enrollment)).to.include(f.enrollmentTokenId);
    expect(JSON.stringify(first.releases)).to.include(f.releases.target);
    expect(JSON.stringify(first.autopeering)).to.include(f.nodes.core);
    expect(first.audit.entries).to.be.an('array').that.is.not.empty;
    expect(JSON.stringify(first.names)).to.include('BETA-AS');
  });

  it('lets the operator account sign in through the proof-of-work captcha', async () => {
    const res = await loginAs(api(f.url), f.account.username, f.account.password);
    expectResponse(res).status(200);
    const token = res.body.token ?? res.body.session_token;
    expect(token).to.be.a('string');
    expectResponse(await api(`${f.api}`, { token }).get('/ui/session')).status(200);
  });

  it('answers the same data on a second instance on the same database', async () => {
    // Both read at the same moment (the fixture's agents keep reporting); values read "now" move with the clock, the seeded content does not.
    const [one, two] = await Promise.all([views(f.url, f.adminToken, f), views(second.url, f.adminToken, f)]);
    const stable = (v: typeof first) => ({
      nodes: ((v.nodes.nodes ?? v.nodes) as { node_id: string }[]).map((n) => n.node_id),
      points: v.dashboard.traffic.points.length,
      previous: measured(v.dashboard.traffic.points_previous) > 100,
      prefixes: JSON.stringify(v.prefixFlaps).includes(f.prefixToBlock),
      alerts: (v.alerts.alerts as { id: number }[]).map((a) => a.id),
      registrations: (v.registrations.registrations as { registration_id: string }[]).map((r) => r.registration_id),
      generations: v.generations,
      records: v.records,
      releases: JSON.stringify(v.releases).match(/\d+\.\d+\.\d+/g),
      routing: v.routing.summary ?? null,
      dns: v.dnsGroups,
    });
    expect(stable(two)).to.deep.equal(stable(one));
    expect(stable(one).alerts).to.have.length.at.least(2);
    // A write on the second instance is read on the first.
    await addAccount(second.sys, 'second-operator', 'another horse battery');
    expectResponse(await loginAs(api(f.url), 'second-operator', 'another horse battery')).status(200);
  });

  it('blocks and unblocks the prefix on every node at once (no agent too old to defer it), then nothing is blocked', async () => {
    const block = await f.admin.post('/admin/fleet/mitigations/prefix-block', { prefix: f.prefixToBlock });
    expectResponse(block).status(200);
    expect(block.body.deferred).to.deep.equal([]);
    expect(block.body.nodes).to.have.members(f.nodes.all);
    const unblock = await f.admin.post('/admin/fleet/mitigations/prefix-unblock', { prefix: f.prefixToBlock });
    expectResponse(unblock).status(200);
    expect((await f.admin.get('/admin/fleet/mitigations')).body.blocked_prefixes).to.deep.equal([]);
  });

  it('goes on like a live fleet: the agents report after the seed, so the nodes stay online and healthy', async () => {
    await eventually(
      async () => {
        const nodes = (await f.admin.get('/admin/health')).body.nodes as { node_id: string; snapshot_at: string | null; health: string }[];
        const core = nodes.find((n) => n.node_id === f.nodes.core)!;
        return Date.parse(core.snapshot_at!) > f.seededAt.getTime() + 1000 && core.health === 'ok';
      },
      { timeoutMs: 15_000, what: 'a snapshot of the core after the seed' },
    );
  });

  describe('pages', () => {
    let browser: Browser;
    before(async function () {
      skipWithoutChromium(this);
      browser = await launchChromium();
    });
    after(async () => browser?.close());

    it('opens the console signed in with the token, on both instances, desktop light and phone dark, with nothing failing', async function () {
      await ensureConsoleBuilt();
      for (const [base, viewport, colorScheme, name] of [
        [f.url, 'desktop', 'light', 'fixture-desktop'],
        [second.url, 'phone', 'dark', 'fixture-phone-second'],
      ] as const) {
        const tab = await openPage(browser, { viewport, colorScheme });
        try {
          await signInWithToken(tab.page, base, await f.accountToken());
          await tab.page.goto(`${base}/console/account`);
          await tab.page.getByRole('heading', { name: 'Account' }).waitFor();
          expect(await tab.page.getByText(f.account.username).count(), 'signed in as the operator').to.be.greaterThan(0);
          await shot(tab.page, name);
          tab.assertClean();
        } finally {
          await tab.close();
        }
      }
    });

    it('opens a phone page signed in with the token in session storage, blocks third-party requests and records errors', async function () {
      const tab = await openPage(browser, { viewport: 'phone', colorScheme: 'dark' });
      try {
        await signInWithToken(tab.page, f.url, f.adminToken);
        await tab.page.goto(`${f.url}/control/v1/healthz`);
        expect(await tab.page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY)).to.equal(f.adminToken);
        expect(tab.page.viewportSize()).to.deep.equal({ width: 390, height: 844 });
        tab.assertClean();
        await tab.page.evaluate(() => {
          sessionStorage.removeItem('dn42.console.token');
        });
        await tab.page.reload();
        expect(await tab.page.evaluate((key) => sessionStorage.getItem(key), TOKEN_KEY), 'a sign-out survives a reload').to.equal(null);
        // A third-party request is aborted and recorded; a console error is recorded.
        await tab.page.evaluate(() => {
          void fetch('https://example.com/tracker.js').catch(() => undefined);
          console.error('boom');
        });
        await eventually(() => tab.thirdParty.length === 1 && tab.errors.length === 1, { what: 'the blocked request and the console error' });
        const path = await shot(tab.page, 'fixture-phone');
        expect(existsSync(path)).to.equal(true);
        expect(() => tab.assertClean()).to.throw(/third-party/);
        expect(tab.thirdParty).to.deep.equal(['GET https://example.com/tracker.js']);
        expect(tab.errors).to.deep.equal(['console: boom']);
      } finally {
        await tab.close();
      }
    });
  });
});
