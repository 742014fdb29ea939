import { expect } from 'chai';
import { createControlApp } from '../../../../http/control/app.js';
import { loadConfig } from '../../../../infra/config.js';
import { migrate } from '../../../../infra/db/migrate.js';
import { registryMigrations } from '../../../../infra/registry/store.js';
import { issueAgentToken } from '../../../support/agents.js';
import { api, expectResponse } from '../../../support/http.js';
import { givenPortalSession } from '../../../support/portal.js';
import { startRegistryReplica } from '../../../support/registry-replica.js';
import { RegistryRepo, registryEnv, rpsl, writeBaseRegistry } from '../../../support/registry.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { snapshot } from '../agent/telemetry-support.js';
import { ADMIN_TOKEN, bgp, node, wg } from '../fleet/support.js';

const SERVICE = 'registry-service-token-for-portal-specs';
const GAMMA = 4242420010;
const DELTA = 4242420011;
/** Holds a manual peering on fra1. */
const EPS = 4242420012;
const KEY = 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
const KEY2 = 'xQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';

type Client = ReturnType<typeof api>;

describe('Portal: node offers and autopeering requests', function () {
  this.timeout(60_000);
  let repo: RegistryRepo;
  let sys: TestSystem;
  let url: string;
  let admin: Client;
  let portal: Client;
  let gamma: string;
  let delta: string;
  let eps: string;
  let noAsn: string;
  const closers: (() => Promise<void>)[] = [];

  async function control(registryUrl: string | undefined) {
    const config = loadConfig({
      DATABASE_URL: sys.db.url,
      LOG_LEVEL: 'silent',
      ADMIN_TOKEN,
      REGISTRY_SERVICE_TOKEN: SERVICE,
      ...(registryUrl ? { REGISTRY_URL: registryUrl } : {}),
    });
    const started = await startApp(createControlApp({ ...sys.context, config }));
    closers.push(started.close);
    return started.url;
  }

  const create = (token: string, body: Record<string, unknown>) => portal.post('/autopeering/requests', body, { token });
  const desired = async (nodeId: string) => (await admin.get(`/admin/nodes/${nodeId}/desired-state`)).body;
  const peeringsOf = async (nodeId: string) => (await admin.get(`/admin/nodes/${nodeId}/peerings`)).body as { id: number; name: string }[];
  const offer = async (nodeId: string) =>
    ((await portal.get('/autopeering/nodes', { token: gamma })).body.nodes as { node_id: string }[]).find((n) => n.node_id === nodeId);

  before(async () => {
    repo = writeBaseRegistry(new RegistryRepo());
    repo
      .put(
        'aut-num',
        `AS${GAMMA}`,
        rpsl([
          ['aut-num', `AS${GAMMA}`],
          ['as-name', 'GAMMA-AS'],
          ['mnt-by', 'GAMMA-MNT'],
          ['source', 'DN42'],
        ]),
      )
      .put(
        'route',
        '172.20.10.0/27',
        rpsl([
          ['route', '172.20.10.0/27'],
          ['origin', `AS${GAMMA}`],
          ['mnt-by', 'GAMMA-MNT'],
          ['source', 'DN42'],
        ]),
      )
      .put(
        'route6',
        'fd42:10::/48',
        rpsl([
          ['route6', 'fd42:10::/48'],
          ['origin', `AS${GAMMA}`],
          ['mnt-by', 'GAMMA-MNT'],
          ['source', 'DN42'],
        ]),
      );
    repo.commit('gamma');
    sys = await createTestSystem({ env: registryEnv(repo.dir, { REGISTRY_SERVICE_TOKEN: SERVICE, ADMIN_TOKEN }) });
    await migrate(sys.pool, [registryMigrations]);
    const replica = await startRegistryReplica(sys, repo.dir, SERVICE);
    closers.push(replica.close);
    url = await control(replica.url);
    admin = api(`${url}/control/v1`, { token: ADMIN_TOKEN });
    portal = api(`${url}/control/v1`);
    expectResponse(await admin.post('/ui/registry/sync')).status(200);

    expectResponse(await admin.post('/admin/nodes', node('fra1'))).status(201);
    expectResponse(await admin.post('/admin/nodes', node('ams1', { router_id: '172.20.0.2', link_local: 'fe80::a' }))).status(201);
    expectResponse(await admin.post('/admin/nodes', node('ber1', { router_id: '172.20.0.3' }))).status(201);
    expectResponse(await admin.post('/admin/nodes', node('bare1', { router_id: '172.20.0.4', loopback_ipv4: null }))).status(201);
    expectResponse(
      await admin.post('/admin/nodes', node('tiny1', { router_id: '172.20.0.5', base_template: { runtime: { wireguard_port_range: '51800-51800' } } })),
    ).status(201);
    expectResponse(await admin.post('/admin/nodes', node('shut1', { router_id: '172.20.0.6' }))).status(201);
    for (const [id, policy] of [
      ['fra1', { enabled: true, endpoint_host: 'fra1.example.net', region: 'Europe', country_code: 'DE', description: 'Frankfurt', notes: 'operator only' }],
      ['ams1', { enabled: true, max_sessions: 1 }],
      ['ber1', { enabled: true, endpoint_host: '2001:db8::3' }],
      ['bare1', { enabled: true }],
      ['tiny1', { enabled: true, endpoint_host: 'tiny1.example.net' }],
      ['shut1', { enabled: false, endpoint_host: 'shut1.example.net' }],
    ] as const) {
      expectResponse(await admin.put(`/admin/autopeering/nodes/${id}`, policy)).status(200);
    }
    // A manual external peering with EPS on fra1 holds port 51800 and peer link-local fe80::2.
    expectResponse(
      await admin.post('/admin/nodes/fra1/peerings/provision', {
        peering: { name: `dn42_${EPS}`, remote_asn: EPS },
        interface_spec: wg(`dn42_${EPS}`, 51800),
        bgp_spec: bgp(`dn42_${EPS}`, EPS, { interface: `dn42_${EPS}` }),
      }),
    ).status(201);

    gamma = await givenPortalSession(sys, { asn: GAMMA, mnt: 'GAMMA-MNT' });
    delta = await givenPortalSession(sys, { asn: DELTA, mnt: 'DELTA-MNT' });
    eps = await givenPortalSession(sys, { asn: EPS, mnt: 'EPS-MNT' });
    noAsn = await givenPortalSession(sys, { asn: null });
  });
  after(async () => {
    for (const close of closers.reverse()) await close();
    await sys?.close();
    repo?.destroy();
  });

  describe('GET /autopeering/nodes', () => {
    it('lists only enabled active nodes, ordered by node_id, with seats (manual peerings counted) and display metadata, not the operator notes', async () => {
      const res = await portal.get('/autopeering/nodes', { token: noAsn });
      expectResponse(res).status(200);
      expect(res.body.nodes.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['ams1', 'bare1', 'ber1', 'fra1', 'tiny1']);
      expect(res.body.nodes.find((n: { node_id: string }) => n.node_id === 'fra1')).to.deep.equal({
        node_id: 'fra1',
        site: 'fra',
        endpoint_host: 'fra1.example.net',
        capacity: 31,
        used_ports: 1,
        free_ports: 30,
        remaining: 30,
        provisioned: 0,
        max_sessions: null,
        region: 'Europe',
        country_code: 'DE',
        description: 'Frankfurt',
        bandwidth_mbps: null,
        monthly_quota_gb: null,
        notice: null,
        not_ready: "our node's WireGuard public key is not known yet: its agent has not registered",
      });
      expect(res.body.nodes.find((n: { node_id: string }) => n.node_id === 'ams1')).to.deep.include({ capacity: 31, remaining: 1, max_sessions: 1 });
      expect(res.body.nodes.find((n: { node_id: string }) => n.node_id === 'tiny1')).to.deep.include({ capacity: 1, free_ports: 1, remaining: 1 });
    });

    it('says a node is not ready while our WireGuard public key is unknown, and ready once its agent registers the key', async () => {
      expect(await offer('tiny1')).to.deep.include({ not_ready: "our node's WireGuard public key is not known yet: its agent has not registered" });
      const { token } = await issueAgentToken(url, ADMIN_TOKEN, 'tiny1');
      expectResponse(await api(`${url}/control/v1`, { token }).post('/agent/wireguard-keys', { node_id: 'tiny1', public_key: KEY2 })).status(200);
      expect(await offer('tiny1')).to.deep.include({ not_ready: null, remaining: 1 });
    });

    it('wants a portal session', async () => {
      expectResponse(await portal.get('/autopeering/nodes')).status(401);
      expectResponse(await portal.get('/autopeering/nodes', { token: ADMIN_TOKEN })).status(401);
    });
  });

  describe('without a verified ASN', () => {
    it('answers 403 on every request endpoint', async () => {
      for (const res of [
        await create(noAsn, { node_id: 'fra1', public_key: KEY }),
        await portal.get('/autopeering/requests', { token: noAsn }),
        await portal.get('/autopeering/requests/1', { token: noAsn }),
        await portal.delete('/autopeering/requests/1', { token: noAsn }),
      ]) {
        expectResponse(res).status(403);
      }
    });
  });

  describe('POST /autopeering/requests: validation before anything is written', () => {
    const invalid = async (body: Record<string, unknown>, detail: string | RegExp, status = 422) => {
      const res = await create(gamma, { node_id: 'fra1', public_key: KEY, ...body });
      expectResponse(res).status(status);
      const text = typeof res.body.detail === 'string' ? res.body.detail : `${res.body.detail.message} ${JSON.stringify(res.body.detail.errors)}`;
      expect(text).to.match(typeof detail === 'string' ? new RegExp(detail.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) : detail);
      return res;
    };
    after(async () => {
      // Nothing of the refused requests was written.
      expect((await peeringsOf('fra1')).map((p) => p.name)).to.deep.equal([`dn42_${EPS}`]);
      expect((await portal.get('/autopeering/requests', { token: gamma })).body.requests).to.deep.equal([]);
    });

    it('refuses MTU outside 1280 to 1420, notes over 512 characters, unknown fields and a malformed key (422)', async () => {
      await invalid({ mtu: 1279 }, /mtu/);
      await invalid({ mtu: 1421 }, /mtu/);
      await invalid({ notes: 'x'.repeat(513) }, /notes/);
      await invalid({ color: 'blue' }, /color|additional/);
      await invalid({ public_key: 'not-a-key' }, /public_key/);
    });

    it('explains why extended_next_hop cannot be false for a multiprotocol session', async () => {
      await invalid(
        { extended_next_hop: false },
        'extended_next_hop cannot be false for a multiprotocol session: IPv4 routes travel with IPv6 next hops (RFC 8950)',
      );
    });

    it('does not take peer addresses for the link-local form', async () => {
      await invalid({ peer_ipv4: '172.20.10.2' }, 'peer_ipv4 not accepted for a link-local multiprotocol session');
      await invalid({ peer_ipv6: 'fd42:10::2' }, 'peer_ipv6 not accepted for a link-local multiprotocol session');
    });

    it('wants a ULA peer inside fd00::/8, both addresses for two plain sessions, host:port endpoints and fe80::/10 link-locals', async () => {
      await invalid({ session_addressing: 'ipv6-ula', peer_ipv6: '2001:db8::1' }, 'peer_ipv6 2001:db8::1 is outside fd00::/8');
      await invalid({ session_addressing: 'ipv6-ula' }, 'peer_ipv6 is required for session_addressing ipv6-ula');
      await invalid({ mp_bgp: false, peer_ipv4: '172.20.10.2' }, 'peer_ipv6 required when mp_bgp is false');
      await invalid({ endpoint: 'peer.example.net' }, 'endpoint peer.example.net is not host:port');
      await invalid({ endpoint: 'peer.example.net:70000' }, 'is not host:port');
      await invalid({ endpoint: '2001:db8::1:51820' }, 'is not host:port');
      await invalid({ link_local: 'fd42::1' }, 'link_local fd42::1 is not inside fe80::/10');
    });

    it('wants peer tunnel addresses inside the route and route6 prefixes the AS holds, naming what to register', async () => {
      await invalid(
        { mp_bgp: false, peer_ipv4: '172.20.99.1', peer_ipv6: 'fd42:10::2' },
        `peer_ipv4 172.20.99.1 is not inside a route prefix of AS${GAMMA}; register a route object covering it (at least 172.20.99.1/32) with origin AS${GAMMA} (AS${GAMMA} holds 172.20.10.0/27)`,
      );
      await invalid({ session_addressing: 'ipv6-ula', peer_ipv6: 'fd42:99::2' }, `peer_ipv6 fd42:99::2 is not inside a route6 prefix of AS${GAMMA}`);
    });

    it('answers 404 for a node that is not open: closed, unknown', async () => {
      await invalid({ node_id: 'shut1' }, 'node shut1 is not open for autopeering', 404);
      await invalid({ node_id: 'nowhere' }, 'node nowhere is not open for autopeering', 404);
    });

    it('checks the link-local address against the node: its own (422), another interface (409)', async () => {
      await invalid({ link_local: 'fe80::1' }, "link_local fe80::1 is the node's own link-local address; choose another link_local");
      await invalid({ link_local: 'fe80::2' }, `link_local fe80::2 is already used by interface 'dn42_${EPS}' on node fra1; choose another link_local`, 409);
    });

    it('names missing node prerequisites of the form (422)', async () => {
      const res = await create(gamma, { node_id: 'bare1', public_key: KEY, mp_bgp: false, peer_ipv4: '172.20.10.2', peer_ipv6: 'fd42:10::2' });
      expectResponse(res).status(422);
      expect(res.body.detail.message).to.equal('node bare1 is missing loopback_ipv4, which this session form needs; choose another node or session form');
    });

    it('refuses an AS that already has an external peering on the node, a manual one too (409)', async () => {
      const res = await create(eps, { node_id: 'fra1', public_key: KEY });
      expectResponse(res).status(409).detail(`node fra1 already has an external peering with AS${EPS} ('dn42_${EPS}'); one per node and AS`);
    });
  });

  describe('the three session forms', () => {
    let linkLocalId: number;

    it('link-local multiprotocol: one session on the lowest free port, published and rung after commit', async () => {
      sys.broadcaster.calls.length = 0;
      const res = await create(gamma, { node_id: 'fra1', public_key: KEY, endpoint: 'peer.example.net:51820', notes: 'hello' });
      expectResponse(res).status(201);
      linkLocalId = res.body.id;
      expect(res.body).to.deep.include({
        adopted: false,
        node_id: 'fra1',
        asn: GAMMA,
        status: 'provisioned',
        form: 'link-local-mp',
        public_key: KEY,
        endpoint: 'peer.example.net:51820',
        listen_port: 51801,
        mtu: 1420,
        interface_name: `dn42_${GAMMA}`,
        session_names: [`autopeer_${GAMMA}`],
        link_local: 'fe80::10',
        peer_ipv4: null,
        peer_ipv6: null,
        notes: 'hello',
        from_snapshot: false,
      });
      expect(res.body.provision).to.deep.equal({
        endpoint: 'fra1.example.net:51801',
        node_public_key: null,
        node_link_local: 'fe80::1',
        node_asn: 4242420001,
        mtu: 1420,
        node_ipv4: null,
        node_ipv6: null,
      });
      const { generation, state } = await desired('fra1');
      expect(res.body.generation).to.equal(generation);
      expect(sys.broadcaster.published.map((c) => [c.node_id, c.generation])).to.deep.equal([['fra1', generation]]);
      const iface = state.interfaces.find((i: { name: string }) => i.name === `dn42_${GAMMA}`);
      expect(iface).to.deep.include({ listen_port: 51801, mtu: 1420, scope: 'external' });
      expect(iface.peer).to.deep.include({ public_key: KEY, endpoint: 'peer.example.net:51820' });
      expect(iface.addresses).to.deep.equal([{ address: 'fe80::1/64', peer: 'fe80::10/128' }]);
      expect(state.bgp_sessions.find((s: { name: string }) => s.name === `autopeer_${GAMMA}`)).to.deep.include({
        remote_asn: GAMMA,
        neighbor: 'fe80::10',
        interface: `dn42_${GAMMA}`,
        address_family: 'mp-bgp',
        extended_next_hop: true,
      });
      expect(await offer('fra1')).to.deep.include({ used_ports: 2, free_ports: 29, remaining: 29, provisioned: 1 });
    });

    it('refuses a second request of the same AS on the node (409)', async () => {
      expectResponse(await create(gamma, { node_id: 'fra1', public_key: KEY }))
        .status(409)
        .detail(`node fra1 already has an external peering with AS${GAMMA} ('autopeer_${GAMMA}'); one per node and AS`);
    });

    it('ULA multiprotocol: one session to the peer ULA from the node loopback; no dial-in host gives a null endpoint', async () => {
      const res = await create(gamma, { node_id: 'ams1', public_key: KEY, session_addressing: 'ipv6-ula', peer_ipv6: 'fd42:10::2', mtu: 1400 });
      expectResponse(res).status(201);
      expect(res.body).to.deep.include({ form: 'ula-mp', peer_ipv6: 'fd42:10::2', listen_port: 51800, mtu: 1400, session_names: [`autopeer_${GAMMA}`] });
      expect(res.body.provision).to.deep.equal({
        endpoint: null,
        node_public_key: null,
        node_link_local: 'fe80::a',
        node_asn: 4242420001,
        mtu: 1400,
        node_ipv4: null,
        node_ipv6: 'fd42:4242:1::1',
      });
      const { state, generation } = await desired('ams1');
      expect(res.body.generation).to.equal(generation);
      expect(state.bgp_sessions.find((s: { name: string }) => s.name === `autopeer_${GAMMA}`)).to.deep.include({
        neighbor: 'fd42:10::2',
        source_address: 'fd42:4242:1::1',
        address_family: 'mp-bgp',
        extended_next_hop: true,
      });
    });

    it('refuses a node whose max_sessions is reached (409)', async () => {
      expectResponse(await create(delta, { node_id: 'ams1', public_key: KEY }))
        .status(409)
        .detail('node ams1 has no autopeering capacity left (max_sessions 1 reached); choose another node');
    });

    it('two plain sessions autopeer_<asn>_v4 and _v6 with both tunnel addresses; an IPv6 dial-in host is bracketed', async () => {
      const res = await create(gamma, { node_id: 'ber1', public_key: KEY, mp_bgp: false, peer_ipv4: '172.20.10.2', peer_ipv6: 'fd42:10::2' });
      expectResponse(res).status(201);
      expect(res.body).to.deep.include({ form: 'dual-plain', session_names: [`autopeer_${GAMMA}_v4`, `autopeer_${GAMMA}_v6`] });
      expect(res.body.provision).to.deep.include({ endpoint: '[2001:db8::3]:51800', node_ipv4: '172.20.0.1', node_ipv6: 'fd42:4242:1::1' });
      const { state } = await desired('ber1');
      const sessions = state.bgp_sessions.filter((s: { remote_asn: number }) => s.remote_asn === GAMMA);
      expect(sessions.map((s: { name: string; neighbor: string; address_family: string }) => [s.name, s.neighbor, s.address_family])).to.deep.equal([
        [`autopeer_${GAMMA}_v4`, '172.20.10.2', 'ipv4'],
        [`autopeer_${GAMMA}_v6`, 'fd42:10::2', 'ipv6'],
      ]);
      expect(state.interfaces.find((i: { name: string }) => i.name === `dn42_${GAMMA}`).addresses).to.deep.equal([
        { address: 'fe80::1/64', peer: 'fe80::10/128' },
        { address: '172.20.0.1/32', peer: '172.20.10.2/32' },
        { address: 'fd42:4242:1::1/128', peer: 'fd42:10::2/128' },
      ]);
    });

    it('lists the AS requests newest first; another AS sees none of them, and its manual peering adopted', async () => {
      const mine = (await portal.get('/autopeering/requests', { token: gamma })).body.requests;
      expect(mine.map((r: { node_id: string }) => r.node_id)).to.deep.equal(['ber1', 'ams1', 'fra1']);
      expect((await portal.get('/autopeering/requests', { token: delta })).body.requests).to.deep.equal([]);
      const adopted = (await portal.get('/autopeering/requests', { token: eps })).body.requests;
      expect(adopted).to.have.length(1);
      expect(adopted[0]).to.deep.include({
        id: null,
        adopted: true,
        node_id: 'fra1',
        asn: EPS,
        status: 'provisioned',
        listen_port: 51800,
        interface_name: `dn42_${EPS}`,
      });
      expect(adopted[0].provision).to.deep.include({ endpoint: 'fra1.example.net:51800' });
    });

    it('detail: another AS gets 404; live is null before a snapshot, then from the latest one (two sessions: a sessions array)', async () => {
      const ber = (await portal.get('/autopeering/requests', { token: gamma })).body.requests[0];
      expectResponse(await portal.get(`/autopeering/requests/${ber.id}`, { token: delta }))
        .status(404)
        .detail(`unknown autopeering request ${ber.id}`);
      const before = await portal.get(`/autopeering/requests/${ber.id}`, { token: gamma });
      expectResponse(before).status(200).body({ live: null, mtu_probe: null, latency: null });

      const { token } = await issueAgentToken(url, ADMIN_TOKEN, 'ber1');
      const agent = api(`${url}/control/v1`, { token });
      const snap = snapshot(
        'ber1',
        { [`autopeer_${GAMMA}_v4`]: 'established', [`autopeer_${GAMMA}_v6`]: 'active' },
        {
          wireguard_interfaces: [
            {
              name: `dn42_${GAMMA}`,
              listen_port: 51800,
              peers: [{ public_key: KEY, latest_handshake_at: '2026-11-01T11:59:30Z', rx_bytes: 4096, tx_bytes: 8192 }],
            },
          ],
        },
      );
      expectResponse(await agent.post('/agent/runtime-snapshot', snap)).status(200);
      const detail = (await portal.get(`/autopeering/requests/${ber.id}`, { token: gamma })).body;
      expect(detail.live).to.deep.equal({
        bgp_state: 'active',
        bgp_health: 'connecting',
        since: '2026-11-01T10:00:00Z',
        observed_at: '2026-11-01T12:00:00.000Z',
        established_seconds: null,
        wireguard: { latest_handshake_at: '2026-11-01T11:59:30Z', rx_bytes: 4096, tx_bytes: 8192 },
        routes: { ipv4: { imported: 10, exported: 5 }, ipv6: { imported: 10, exported: 5 } },
        sessions: [
          {
            name: `autopeer_${GAMMA}_v4`,
            bgp_state: 'established',
            bgp_health: 'up',
            since: '2026-11-01T10:00:00Z',
            established_seconds: 7200,
            routes: { imported: 10, exported: 5 },
          },
          {
            name: `autopeer_${GAMMA}_v6`,
            bgp_state: 'active',
            bgp_health: 'connecting',
            since: '2026-11-01T10:00:00Z',
            established_seconds: null,
            routes: { imported: 10, exported: 5 },
          },
        ],
      });
    });

    it('shows an operator change of the peering at once (fields derived from the peering)', async () => {
      const row = (await portal.get(`/autopeering/requests/${linkLocalId}`, { token: gamma })).body;
      const [iface] = (await admin.get(`/admin/nodes/fra1/interfaces`)).body.filter((i: { name: string }) => i.name === `dn42_${GAMMA}`);
      expectResponse(
        await admin.patch(`/admin/interfaces/${iface.id}`, { spec: { ...iface.spec, mtu: 1380, peer: { ...iface.spec.peer, public_key: KEY2 } } }),
      ).status(200);
      const after = (await portal.get(`/autopeering/requests/${linkLocalId}`, { token: gamma })).body;
      expect([row.mtu, row.public_key]).to.deep.equal([1420, KEY]);
      expect([after.mtu, after.public_key, after.provision.mtu]).to.deep.equal([1380, KEY2, 1380]);
    });
  });

  describe('DELETE /autopeering/requests/{id} and an operator removing the peering', () => {
    it("404 for another AS's request; cancels its own, removes the peering, frees seat and port; 409 the second time; the AS may submit again", async () => {
      const [fra] = (await portal.get('/autopeering/requests', { token: gamma })).body.requests.filter((r: { node_id: string }) => r.node_id === 'fra1');
      expectResponse(await portal.delete(`/autopeering/requests/${fra.id}`, { token: delta })).status(404);
      sys.broadcaster.calls.length = 0;
      const res = await portal.delete(`/autopeering/requests/${fra.id}`, { token: gamma });
      expectResponse(res).status(200).body({ id: fra.id, status: 'cancelled', cancelled_by: 'requester', reject_reason: null, from_snapshot: true });
      expectResponse(await admin.get(`/admin/peerings/${fra.peering_id}`)).status(404);
      const { state, generation } = await desired('fra1');
      expect(state.bgp_sessions.map((s: { name: string }) => s.name)).to.not.include(`autopeer_${GAMMA}`);
      expect(sys.broadcaster.published.map((c) => [c.node_id, c.generation])).to.deep.equal([['fra1', generation]]);
      expect(await offer('fra1')).to.deep.include({ used_ports: 1, provisioned: 0 });
      expectResponse(await portal.delete(`/autopeering/requests/${fra.id}`, { token: gamma }))
        .status(409)
        .detail(`autopeering request ${fra.id} is not provisioned`);

      const again = await create(gamma, { node_id: 'fra1', public_key: KEY });
      expectResponse(again).status(201).body({ listen_port: 51801, status: 'provisioned' });
      expect(again.body.id).to.not.equal(fra.id);
    });

    it('an operator deleting the peering cancels the request with reject reason "removed by operator"; the row falls back to its record', async () => {
      const [ams] = (await portal.get('/autopeering/requests', { token: gamma })).body.requests.filter(
        (r: { node_id: string; status: string }) => r.node_id === 'ams1' && r.status === 'provisioned',
      );
      expectResponse(await admin.delete(`/admin/peerings/${ams.peering_id}`)).status(204);
      const row = (await portal.get(`/autopeering/requests/${ams.id}`, { token: gamma })).body;
      expect(row).to.deep.include({ status: 'cancelled', cancelled_by: 'operator', reject_reason: 'removed by operator', from_snapshot: true, live: null });
      expect(row).to.deep.include({ form: 'ula-mp', peer_ipv6: 'fd42:10::2', mtu: 1400, listen_port: 51800 });
      expect(await offer('ams1')).to.deep.include({ provisioned: 0, remaining: 1 });
      expectResponse(await create(delta, { node_id: 'ams1', public_key: KEY })).status(201);
    });
  });

  describe('the last free port and failures', () => {
    it('two concurrent requests for the last free port: one 201, one 409', async () => {
      const results = await Promise.all([create(gamma, { node_id: 'tiny1', public_key: KEY }), create(delta, { node_id: 'tiny1', public_key: KEY })]);
      expect(results.map((r) => r.status).sort()).to.deep.equal([201, 409]);
      expect(results.find((r) => r.status === 409)!.body.detail).to.equal('node tiny1 has no free port left in its external port pool; choose another node');
      expect((await peeringsOf('tiny1')).length).to.equal(1);
      expect(await offer('tiny1')).to.deep.include({ used_ports: 1, free_ports: 0, remaining: 0, provisioned: 1 });
    });

    it('deleting the node cancels its requests as removed by operator; the node leaves the offers', async () => {
      const rowsOf = async (token: string) =>
        ((await portal.get('/autopeering/requests', { token })).body.requests as { node_id: string; id: number }[]).filter((r) => r.node_id === 'tiny1');
      const [row] = [...(await rowsOf(gamma)), ...(await rowsOf(delta))];
      expectResponse(await admin.post('/admin/nodes/tiny1/decommission')).status(200);
      expectResponse(await admin.delete('/admin/nodes/tiny1')).status(204);
      const rows = (await sys.pool.query(`SELECT status, cancelled_by, reject_reason FROM autopeering_requests WHERE id = $1`, [row.id])).rows;
      expect(rows).to.deep.equal([{ status: 'cancelled', cancelled_by: 'operator', reject_reason: 'removed by operator' }]);
      expect(await offer('tiny1')).to.equal(undefined);
    });

    it('a failure after the port is chosen leaves nothing behind: no peering, no generation, no doorbell, no request', async () => {
      const before = await desired('ber1');
      const peerings = await peeringsOf('ber1');
      const requests = (await portal.get('/autopeering/requests', { token: delta })).body.requests.length;
      sys.broadcaster.calls.length = 0;
      await sys.pool.query(`CREATE FUNCTION portal_spec_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$`);
      await sys.pool.query(`CREATE TRIGGER portal_spec_fail BEFORE INSERT ON autopeering_requests FOR EACH ROW EXECUTE FUNCTION portal_spec_fail()`);
      try {
        const res = await create(delta, { node_id: 'ber1', public_key: KEY });
        expect(res.status).to.equal(500);
      } finally {
        await sys.pool.query(`DROP TRIGGER portal_spec_fail ON autopeering_requests; DROP FUNCTION portal_spec_fail()`);
      }
      expect(await peeringsOf('ber1')).to.deep.equal(peerings);
      expect((await desired('ber1')).generation).to.equal(before.generation);
      expect(sys.broadcaster.calls).to.deep.equal([]);
      expect((await portal.get('/autopeering/requests', { token: delta })).body.requests.length).to.equal(requests);
      // The port it had chosen is still the lowest free one.
      expectResponse(await create(delta, { node_id: 'ber1', public_key: KEY }))
        .status(201)
        .body({ listen_port: 51801 });
    });

    it('answers 503 when the registry replica does not answer and the form needs it; the link-local form does not', async () => {
      const down = api(`${await control('http://127.0.0.1:9')}/control/v1`);
      const res = await down.post(
        '/autopeering/requests',
        { node_id: 'fra1', public_key: KEY, mp_bgp: false, peer_ipv4: '172.20.10.2', peer_ipv6: 'fd42:10::2' },
        { token: delta },
      );
      expectResponse(res).status(503);
      expect((await peeringsOf('fra1')).length).to.equal(2);
      expectResponse(await down.post('/autopeering/requests', { node_id: 'fra1', public_key: KEY }, { token: delta })).status(201);
    });
  });
});
