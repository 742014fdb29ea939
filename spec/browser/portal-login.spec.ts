import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { peerConfig } from '../../domain/autopeering/peer-config.js';
import { expectResponse } from '../support/http.js';
import { checkBirdSnippet, checkWireguardSnippet, wgGenkey, wgPubkey } from '../support/peer-config-check.js';
import { givenPortalSession } from '../support/portal.js';
import { launchChromium, openTab, skipWithoutChromium, type Tab } from './authorize-support.js';
import { answerProbe, exchangeHandoff, loginThroughBrowser, postSnapshot, startPortalWorld, type PortalWorld } from './portal-support.js';

/**
 * The portal's login fixture in Chromium: from the portal login endpoint
 * through the identity service's authorization page (an SSH signature made by
 * `ssh-keygen -Y sign` from the command the page shows) to
 * `{portal_url}/auth/complete?handoff=`, whose code trades over HTTP for a
 * portal session; and the world's agent helpers that make a request live.
 */
describe('Portal login in a browser (fixture for the portal pages)', function () {
  this.timeout(240_000);
  let world: PortalWorld;
  let browser: Browser;
  let tab: Tab;

  before(async function () {
    this.timeout(240_000);
    skipWithoutChromium(this);
    world = await startPortalWorld();
    browser = await launchChromium();
  });
  beforeEach(async () => {
    tab = await openTab(browser);
  });
  afterEach(() => tab?.context.close());
  after(async () => {
    await browser?.close();
    await world?.close();
  });

  it('reaches {portal_url}/auth/complete with a handoff (PORTAL_URL defaults to the control server’s /portal) and keeps a site-relative next', async () => {
    expect(world.portalUrl).to.equal(`${world.controlUrl}/portal`);
    const { handoff, url } = await loginThroughBrowser(tab.page, world, { next: '/peerings/new', holdCompletion: true });
    expect(`${url.origin}${url.pathname}`).to.equal(`${world.controlUrl}/portal/auth/complete`);
    expect(handoff).to.be.a('string').with.length.greaterThan(10);
    expect(url.searchParams.get('next')).to.equal('/peerings/new');
    expect(url.searchParams.get('error')).to.equal(null);
    expect(tab.page.url()).to.equal(url.href);
  });

  it('the handoff trades once for a session that reads /autopeering/me; the world’s nodes are offered; a snapshot makes a request live', async () => {
    const { handoff } = await loginThroughBrowser(tab.page, world, { holdCompletion: true });
    const session = await exchangeHandoff(world, handoff);
    expect(session.profile).to.deep.include({ asn: world.asn, mntner: world.mntner, route: world.routes.route, route6: world.routes.route6 });
    expect(session.expires_at).to.be.a('string');
    expectResponse(await world.portal.post('/autopeering/auth/exchange', { handoff }))
      .status(401)
      .detail('invalid, expired or already used handoff code');

    const token = session.session_token;
    expectResponse(await world.portal.get('/autopeering/me', { token }))
      .status(200)
      .body({ profile: session.profile });

    const offers = (await world.portal.get('/autopeering/nodes', { token })).body.nodes as Record<string, unknown>[];
    expect(offers.map((n) => n.node_id)).to.deep.equal(['ams1', 'ber1', 'fra1']);
    expect(offers.find((n) => n.node_id === 'fra1')).to.deep.include({ endpoint_host: world.nodes.fra1.endpoint_host, remaining: 5, max_sessions: 5 });

    // A request in the link-local form, made live by the agent's snapshot; the creation's MTU probe is answered by the agent helper.
    const [created, mtuSpec] = await Promise.all([
      world.portal.post('/autopeering/requests', { node_id: 'fra1', public_key: world.nodes.ams1.public_key }, { token }),
      answerProbe(world, 'fra1', 'mtu'),
    ]);
    expectResponse(created).status(201);
    expect(mtuSpec).to.deep.include({ tool: 'mtu', interface: created.body.interface_name });
    expect(created.body.provision).to.deep.include({
      endpoint: `${world.nodes.fra1.endpoint_host}:${created.body.listen_port}`,
      node_public_key: world.nodes.fra1.public_key,
      node_link_local: world.nodes.fra1.link_local,
      node_asn: world.nodes.fra1.asn,
    });
    const detailUrl = `/autopeering/requests/${created.body.id}`;
    expectResponse(await world.portal.get(detailUrl, { token }))
      .status(200)
      .body({ live: null });
    await postSnapshot(world, created.body);
    const live = (await world.portal.get(detailUrl, { token })).body.live;
    expect(live).to.deep.include({ bgp_state: 'established', bgp_health: 'up', established_seconds: 3600 });
    expect(live.wireguard).to.deep.include({ rx_bytes: 4096, tx_bytes: 8192 });
    expect(live.routes).to.deep.equal({ ipv4: { imported: 5, exported: 30 }, ipv6: { imported: 7, exported: 4 } });

    // A latency probe answered by the agent helper.
    const [probed] = await Promise.all([world.portal.post(`${detailUrl}/probe-latency`, {}, { token }), answerProbe(world, 'fra1', 'latency')]);
    expectResponse(probed).status(200).body({ rtt_ms_avg: 12.5, rtt_ms_max: 15.2, loss_pct: 0 });
    expectResponse(await world.portal.delete(detailUrl, { token }))
      .status(200)
      .body({ status: 'cancelled' });
  });

  it('the API’s answer for each session form makes a peer configuration that bird -p and wg accept', async function () {
    this.timeout(60_000);
    const token = await givenPortalSession(world.f.sys, { asn: world.asn, mnt: world.mntner, ...world.routes });
    const key = await wgPubkey(await wgGenkey());
    const forms = [
      ['fra1', {}],
      ['ams1', { session_addressing: 'ipv6-ula', peer_ipv6: world.tunnel.ipv6 }],
      ['ber1', { mp_bgp: false, peer_ipv4: world.tunnel.ipv4, peer_ipv6: world.tunnel.ipv6 }],
    ] as const;
    for (const [nodeId, body] of forms) {
      const created = await world.portal.post('/autopeering/requests', { node_id: nodeId, public_key: key, ...body }, { token });
      expectResponse(created).status(201);
      const detail = (await world.portal.get(`/autopeering/requests/${created.body.id}`, { token })).body;
      const n = world.nodes[nodeId];
      expect(detail.provision).to.deep.include({
        node_ipv4: detail.form === 'dual-plain' ? n.loopback_ipv4 : null,
        node_ipv6: detail.form === 'link-local-mp' ? null : n.loopback_ipv6,
      });
      const config = peerConfig(detail);
      expect(config.wireguard).to.include(`PublicKey = ${n.public_key}\nEndpoint = ${n.endpoint_host}:${detail.listen_port}\n`);
      expect(config.bird).to.include(`as ${n.asn};`);
      await checkBirdSnippet(config.bird);
      await checkWireguardSnippet(config.wireguard);
      expectResponse(await world.portal.delete(`/autopeering/requests/${created.body.id}`, { token })).status(200);
    }
  });
});
