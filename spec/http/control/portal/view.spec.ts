import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'chai';
import * as allow from '../../../../http/control/portal/allow-lists.js';
import { recordHeartbeat } from '../../../../infra/telemetry/liveness.js';
import { api, expectResponse, type ApiResponse } from '../../../support/http.js';
import { givenPortalSession } from '../../../support/portal.js';
import { snapshot, startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { ADMIN_TOKEN } from '../fleet/support.js';
import { scanForLeaks } from '../public/leaks.js';

const OWN_AS = 4242420010;
const OTHER_AS = 4242420077;
const OWN_KEY = 'oQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
const OTHER_KEY = 'xQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
const NODE_KEYS: Record<string, string> = { n1: 'aQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=', n2: 'bQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=' };
/** Our nodes' own addresses (router id, loopbacks, link-local, mesh tunnel): never shown to a portal user. */
const NODE_ADDRESSES = ['172.20.0.1', '172.20.0.2', 'fd42:4242:1::1', 'fd42:4242:1::2', 'fe80::1', 'fe80::2', '10.99.0.2', '10.99.0.3'];
/** Peers' WireGuard endpoints and the test snapshot's. */
const PEER_ENDPOINTS = ['198.51.100.10:51820', '198.51.100.77:51820', 'n2.nodes.example.net:52801', '192.0.2.1:51820'];

const REQUEST_KEY = 'rQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';
const DIAL_IN = '203.0.113.9';
/**
 * What the session's own peerings may show outside the network view: the adopted one
 * at n1 (its key, endpoint, link-local; n1's key and link-local) and its request at
 * n2 (its key; n2's key, link-local and dial-in endpoint).
 */
const OWN_PEERING = [OWN_KEY, '198.51.100.10:51820', 'fe80::2', NODE_KEYS.n1, 'fe80::1', REQUEST_KEY, NODE_KEYS.n2, DIAL_IN];

const T0 = Date.UTC(2026, 10, 5, 10, 0);
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
const iso = (minutes: number) => at(minutes).toISOString();

/** Keys no answer of the network view may carry at any depth. */
const VIEW_FORBIDDEN_KEYS = [
  'public_key',
  'endpoint',
  'private_key',
  'private_key_ref',
  'base_template',
  'inventory',
  'labels',
  'router_id',
  'loopback_ipv4',
  'loopback_ipv6',
  'link_local',
  'addresses',
  'listen_port',
  'peering',
  'token',
  'lifecycle',
  'agent_version',
  'adjacencies',
  'peering_issues',
];
/** Keys no portal answer may carry, requests included (their own request's key and endpoint are the user's). */
const PORTAL_FORBIDDEN_KEYS = ['private_key', 'private_key_ref', 'base_template', 'inventory', 'router_id', 'loopback_ipv4', 'loopback_ipv6', 'token'];

function keysOf(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => keysOf(v, out));
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      keysOf(v, out);
    }
  return out;
}

describe('Portal read-only network view (/autopeering/fleet/*, /nodes/{id}/traffic, /my/flaps)', function () {
  this.timeout(120_000);
  let h: AgentHarness;
  let portal: ReturnType<typeof api>;
  let anonymous: ReturnType<typeof api>;
  let token: string;
  const secrets: string[] = [ADMIN_TOKEN];

  async function sessions(nodeId: string, m: number, states: Record<string, [number, string]>) {
    h.sys.clock.current = at(m);
    const body = snapshot(nodeId, {}, { captured_at: iso(m) });
    body.bgp_protocols = Object.entries(states).map(([name, [remote_asn, state]]) => ({
      name,
      state,
      since: '2026-11-05T09:00:00Z',
      remote_asn,
      routes_imported: 3,
      routes_exported: 2,
    }));
    expectResponse(await h.agent[nodeId].post('/agent/runtime-snapshot', body)).status(200);
  }
  async function traffic(nodeId: string, m: number, peers: { interface: string; public_key: string; rx_bytes: number; tx_bytes: number }[]) {
    h.sys.clock.current = at(m);
    expectResponse(await h.agent[nodeId].post('/agent/wireguard-traffic', { node_id: nodeId, captured_at: iso(m), peers })).status(200);
  }

  before(async () => {
    h = await startAgents(['n1', 'n2', 'n3']);
    const base = `${h.url}/control/v1`;
    portal = api(base);
    anonymous = api(base);
    const ok = async (p: Promise<ApiResponse>, status = 201) => expectResponse(await p).status(status);
    for (const [id, site, n] of [
      ['n1', 'fra1', 1],
      ['n2', 'ams1', 2],
    ] as const) {
      await ok(
        h.admin.patch(`/admin/nodes/${id}`, {
          site,
          router_id: `172.20.0.${n}`,
          loopback_ipv4: `172.20.0.${n}`,
          loopback_ipv6: `fd42:4242:1::${n}`,
          link_local: `fe80::${n}`,
          inventory: { hostname: `${id}.nodes.example.net`, capabilities: ['bird', 'wireguard'] },
        }),
        200,
      );
      await ok(h.agent[id].post('/agent/wireguard-keys', { node_id: id, public_key: NODE_KEYS[id] }), 200);
      await recordHeartbeat(h.sys.pool, id, { agent_version: '1.0.231', applied_generation: 1, apply_status: 'succeeded' }, h.sys.clock.now());
    }
    await ok(h.admin.post('/admin/nodes/n3/decommission'), 200);
    await ok(
      h.admin.post('/admin/nodes/n1/peerings/provision', {
        peering: { name: 'wg_n2', remote_asn: 4242420001, remote_node_id: 'n2', is_internal: true },
        interface_spec: { name: 'wg_n2', listen_port: 52801, addresses: ['10.99.0.2/31'], cost: 10, peer: { endpoint: 'n2.nodes.example.net:52801' } },
      }),
    );
    await ok(
      h.admin.post('/admin/nodes/n2/peerings/provision', {
        peering: { name: 'wg_n1', remote_asn: 4242420001, remote_node_id: 'n1', is_internal: true },
        interface_spec: { name: 'wg_n1', listen_port: 52801, addresses: ['10.99.0.3/31'], cost: 10 },
      }),
    );
    for (const [asn, key] of [
      [OWN_AS, OWN_KEY],
      [OTHER_AS, OTHER_KEY],
    ] as const) {
      const name = `dn42_${asn % 10000}`;
      await ok(
        h.admin.post('/admin/nodes/n1/peerings/provision', {
          peering: { name: `as${asn}`, remote_asn: asn },
          interface_spec: {
            name,
            listen_port: 51800 + ((asn % 100) % 30),
            peer: { public_key: key, endpoint: `198.51.100.${asn % 100}:51820` },
            peer_link_local: 'fe80::2',
          },
          bgp_spec: { name, remote_asn: asn, neighbor_address: 'fe80::2', interface: name },
        }),
      );
    }

    // Sessions: ours flaps four times at n1 (a flap trace of OWN_AS); the other AS stays up.
    await sessions('n1', 0, { dn42_0010: [OWN_AS, 'established'], dn42_0077: [OTHER_AS, 'established'] });
    await sessions('n2', 0, { wg_n1: [4242420001, 'established'] });
    for (const m of [1, 2, 3, 4]) {
      await sessions('n1', m, { dn42_0010: [OWN_AS, 'idle'], dn42_0077: [OTHER_AS, 'established'] });
      await sessions('n1', m, { dn42_0010: [OWN_AS, 'established'], dn42_0077: [OTHER_AS, 'established'] });
    }
    // Prefix flaps entering through our AS and through the other one.
    h.sys.clock.current = at(5);
    await ok(
      h.agent.n1.post('/agent/prefix-flaps', {
        node_id: 'n1',
        captured_at: iso(5),
        feed_state: 'established',
        entries: [
          { prefix: '172.21.10.0/24', peer_asn: OWN_AS, origin_asn: OWN_AS, score: 40, last_flap_at: iso(4), as_path: [OWN_AS] },
          { prefix: '172.21.77.0/24', peer_asn: OTHER_AS, origin_asn: 4242420099, score: 25, last_flap_at: iso(4), as_path: [OTHER_AS, 4242420099] },
        ],
      }),
      200,
    );
    // Two light traffic samples 30 s apart: current rates per peer.
    const peers = (k: number) => [
      { interface: 'dn42_0010', public_key: OWN_KEY, rx_bytes: 1000 * k, tx_bytes: 2000 * k },
      { interface: 'dn42_0077', public_key: OTHER_KEY, rx_bytes: 3000 * k, tx_bytes: 4000 * k },
      { interface: 'wg_n2', public_key: NODE_KEYS.n2, rx_bytes: 500 * k, tx_bytes: 500 * k },
    ];
    await traffic('n1', 6, peers(1));
    await traffic('n1', 6.5, peers(2));
    await ok(
      h.agent.n1.post('/agent/routing-table', {
        node_id: 'n1',
        captured_at: iso(6),
        rpki_observed: true,
        routes: [{ prefix: '172.21.10.0/24', protocol: 'dn42_0010', origin_asn: OWN_AS, as_path: [OWN_AS], rpki: 'valid', local: false }],
      }),
      200,
    );
    await h.sys.context.background.drain();
    h.sys.clock.current = at(7);
    token = await givenPortalSession(h.sys, { asn: OWN_AS, mnt: 'OWN-MNT' });
    portal = api(base, { token });
    // A request of our AS at n2 through the portal, so that the scan reads a request detail too.
    await ok(h.admin.put('/admin/autopeering/nodes/n2', { enabled: true, endpoint_host: DIAL_IN }), 200);
    await ok(portal.post('/autopeering/requests', { node_id: 'n2', public_key: REQUEST_KEY }));
  });
  after(async () => h?.close());

  const VIEW_PATHS = [
    '/autopeering/fleet/dashboard',
    '/autopeering/fleet/traffic',
    '/autopeering/nodes/n1/traffic',
    '/autopeering/fleet/traffic-breakdown',
    '/autopeering/fleet/prefix-flaps',
    '/autopeering/fleet/flap-stats',
    '/autopeering/my/flaps',
  ];

  describe('credentials', () => {
    it('refuses every view without a portal session (401), and the admin token on them', async () => {
      for (const path of VIEW_PATHS) {
        expectResponse(await anonymous.get(path))
          .status(401)
          .detail('missing bearer token');
        expectResponse(await anonymous.get(path, { token: ADMIN_TOKEN }))
          .status(401)
          .detail('invalid or expired portal session');
      }
    });

    it('refuses the portal token on the console views it is built from', async () => {
      for (const path of ['/ui/dashboard', '/ui/fleet/traffic', '/ui/fleet/prefix-flaps', '/ui/fleet/flap-peers/4242420010'])
        expectResponse(await portal.get(path)).status(401);
    });

    it('exposes neither the console mitigation endpoints nor the flap alert stream, and no other console view', async () => {
      const doc = (await anonymous.get('/openapi.json')).body as { paths: Record<string, unknown> };
      const portalPaths = Object.keys(doc.paths).filter((p) => p.startsWith('/control/v1/autopeering/'));
      expect(portalPaths.filter((p) => /mitigation|flap-alerts|flap-peers|peering-issues|bgp-flaps|localize|overview/.test(p))).to.deep.equal([]);
      for (const path of ['/autopeering/fleet/flap-alerts', '/autopeering/fleet/mitigations', '/autopeering/fleet/flap-peers', '/autopeering/fleet/overview'])
        expectResponse(await portal.get(path)).status(404);
      expectResponse(await portal.post('/autopeering/fleet/mitigations/peer-disable', { node_id: 'n1', peer_asn: OTHER_AS })).status(404);
    });

    it('answers /my/flaps 403 for a session without a verified ASN, while the fleet views stay readable', async () => {
      const noAsn = await givenPortalSession(h.sys, { asn: null });
      expectResponse(await anonymous.get('/autopeering/my/flaps', { token: noAsn })).status(403);
      expectResponse(await anonymous.get('/autopeering/fleet/traffic', { token: noAsn })).status(200);
    });
  });

  describe('GET /autopeering/fleet/dashboard', () => {
    it('bundles overview, traffic and routing; node rows keep only node_id, health, site, region, geo, capabilities', async () => {
      const res = await portal.get('/autopeering/fleet/dashboard');
      expectResponse(res).status(200);
      expect(Object.keys(res.body).sort()).to.deep.equal(['generated_at', 'overview', 'routing', 'traffic', 'traffic_by_as', 'traffic_mix']);
      expect(res.body).to.include({ traffic_by_as: null, traffic_mix: null, generated_at: iso(7) });
      const { nodes, links, summary } = res.body.overview;
      // Active nodes only (n3 is decommissioned), as /public/fleet.
      expect(nodes.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['n1', 'n2']);
      for (const n of nodes) expect(Object.keys(n).sort()).to.deep.equal(['capabilities', 'geo', 'health', 'node_id', 'region', 'site']);
      expect(nodes[0]).to.deep.include({ node_id: 'n1', site: 'fra1', capabilities: ['bird', 'wireguard'] });
      expect(nodes[0].geo).to.include({ city: 'Frankfurt', country: 'DE' });
      expect(links).to.deep.equal([{ a: 'n1', b: 'n2' }]);
      expect(summary.total).to.equal(2);
      // The default window is 24h (10 min buckets); series times are epoch seconds.
      expect(res.body.traffic).to.include({ range: '24h', bucket_seconds: 600, points_previous: null });
      expect(res.body.traffic.points).to.have.length(144);
      expect(res.body.traffic.points[0].t).to.be.a('number');
      expect(res.body.routing.summary).to.include({ nodes_reporting: 1, size: 1 });
      expect(res.body.routing.trend.every((p: { t: unknown }) => typeof p.t === 'number')).to.equal(true);
      expect(res.body.routing.origins[0]).to.include({ asn: OWN_AS, count: 1 });
    });

    it('adds traffic_by_as and traffic_mix with as_traffic=1 and the previous window with compare=1', async () => {
      const res = await portal.get('/autopeering/fleet/dashboard?range=6h&compare=1&as_traffic=1&origins_top=1');
      expectResponse(res).status(200);
      expect(res.body.traffic).to.include({ range: '6h', bucket_seconds: 300 });
      expect(res.body.traffic.points_previous).to.have.length(72);
      expect(res.body.traffic_by_as).to.have.keys('series', 'table');
      expect(res.body.traffic_mix).to.have.keys('internal_bytes', 'external_bytes', 'rx_bytes', 'tx_bytes');
    });

    it('answers 422 for the observation ranges (7d, 30d), 1h, and the console-only parameters', async () => {
      for (const q of ['range=7d', 'range=30d', 'range=1h', 'origins_top=201', 'as_traffic=2', 'traffic_limit=5', 'origins_sort=v4'])
        expectResponse(await portal.get(`/autopeering/fleet/dashboard?${q}`)).status(422);
    });
  });

  describe('fleet and node traffic', () => {
    it('answers /fleet/traffic for 6h and 24h only: 7d, 30d and 1h are 422', async () => {
      const six = await portal.get('/autopeering/fleet/traffic?range=6h&compare=1');
      expectResponse(six).status(200);
      expect(six.body).to.include({ range: '6h', bucket_seconds: 300 });
      expect(six.body.points).to.have.length(72);
      expect(six.body.points_previous).to.have.length(72);
      expect(six.body.points.at(-1)).to.have.keys('t', 'rx_bytes_per_sec', 'tx_bytes_per_sec');
      expectResponse(await portal.get('/autopeering/fleet/traffic'))
        .status(200)
        .body({ range: '24h' });
      for (const range of ['7d', '30d', '1h', 'x'])
        expectResponse(await portal.get(`/autopeering/fleet/traffic?range=${range}`))
          .status(422)
          .detail('request validation failed');
    });

    it('answers a node throughput, 404 for an unknown node, 422 for 7d', async () => {
      const res = await portal.get('/autopeering/nodes/n1/traffic?range=6h');
      expectResponse(res).status(200).body({ node_id: 'n1', range: '6h' });
      // The console's numbers, on epoch-second times.
      const console = (await h.admin.get('/ui/nodes/n1/traffic?range=6h')).body;
      expect(res.body.points.map((p: { rx_bytes_per_sec: number | null }) => p.rx_bytes_per_sec)).to.deep.equal(
        console.points.map((p: { rx_bytes_per_sec: number | null }) => p.rx_bytes_per_sec),
      );
      expect(res.body.points.map((p: { t: number }) => p.t * 1000)).to.deep.equal(console.points.map((p: { at: string }) => Date.parse(p.at)));
      expectResponse(await portal.get('/autopeering/nodes/nobody/traffic'))
        .status(404)
        .detail('unknown node nobody');
      expectResponse(await portal.get('/autopeering/nodes/n1/traffic?range=7d')).status(422);
    });
  });

  describe('GET /autopeering/fleet/traffic-breakdown', () => {
    it('keeps peers to node_id, interface and the rates: no public key, no endpoint, no peering', async () => {
      const res = await portal.get('/autopeering/fleet/traffic-breakdown?top=2');
      expectResponse(res).status(200);
      expect(res.body.peers).to.deep.equal([
        { node_id: 'n1', interface: 'dn42_0077', rx_bytes_per_sec: 100, tx_bytes_per_sec: 133.33 },
        { node_id: 'n1', interface: 'dn42_0010', rx_bytes_per_sec: 33.33, tx_bytes_per_sec: 66.67 },
      ]);
      expect(res.body.peer_total).to.equal(3);
      expect(res.body.nodes.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['n1', 'n2']);
      expect(res.text).to.not.include(OWN_KEY).and.not.include(OTHER_KEY).and.not.include(NODE_KEYS.n2);
    });

    it('answers 422 for top outside 1 to 200 and the console parameters', async () => {
      for (const q of ['top=0', 'top=201', 'peers_limit=5', 'breakdown_top=5'])
        expectResponse(await portal.get(`/autopeering/fleet/traffic-breakdown?${q}`)).status(422);
    });
  });

  describe('flap views', () => {
    it('answers /fleet/prefix-flaps as the console does, in both forms, localisation included', async () => {
      for (const q of ['', '?group=prefix', '?min_score=0&limit=1', '?group=prefix&min_score=30']) {
        const mine = await portal.get(`/autopeering/fleet/prefix-flaps${q}`);
        const console = await h.admin.get(`/ui/fleet/prefix-flaps${q}`);
        expectResponse(mine).status(200);
        expect(mine.body, q).to.deep.equal(console.body);
      }
      const grouped = (await portal.get('/autopeering/fleet/prefix-flaps?group=prefix')).body;
      expect(grouped.prefixes.map((p: { prefix: string }) => p.prefix)).to.deep.equal(['172.21.10.0/24', '172.21.77.0/24']);
      expect(grouped.prefixes[0]).to.have.property('localization');
      for (const q of ['limit=0', 'limit=501', 'group=peer', 'min_score=-1'])
        expectResponse(await portal.get(`/autopeering/fleet/prefix-flaps?${q}`)).status(422);
    });

    it('answers /fleet/flap-stats as the console does; an unknown range is 422', async () => {
      for (const q of ['', '?range=6h', '?range=30d']) {
        const mine = await portal.get(`/autopeering/fleet/flap-stats${q}`);
        expectResponse(mine).status(200);
        expect(mine.body, q).to.deep.equal((await h.admin.get(`/ui/fleet/flap-stats${q}`)).body);
      }
      expectResponse(await portal.get('/autopeering/fleet/flap-stats?range=2h')).status(422);
    });

    it("answers /my/flaps with the console's flap detail of the session's own AS", async () => {
      const res = await portal.get('/autopeering/my/flaps');
      expectResponse(res).status(200);
      const console = (await h.admin.get(`/ui/fleet/flap-peers/${OWN_AS}`)).body;
      expect(res.body).to.include({ asn: OWN_AS, has_flaps: true, severity: console.severity, prefix_count: 1 });
      expect(res.body.sessions).to.deep.equal(console.sessions);
      expect(res.body.sessions.map((s: { session: string }) => s.session)).to.deep.equal(['dn42_0010']);
      expect(res.body.prefixes).to.deep.equal(console.prefixes);
      expect(res.body.prefixes.map((p: { prefix: string }) => p.prefix)).to.deep.equal(['172.21.10.0/24']);
      expect(res.text).to.not.include(String(OTHER_AS));
    });

    it('answers 200 with has_flaps false for an AS without flap traces (the console says 404)', async () => {
      const quiet = await givenPortalSession(h.sys, { asn: 4242420055, mnt: 'QUIET-MNT' });
      expectResponse(await h.admin.get('/ui/fleet/flap-peers/4242420055')).status(404);
      const res = await anonymous.get('/autopeering/my/flaps', { token: quiet });
      expectResponse(res).status(200);
      expect(res.body).to.deep.equal({
        generated_at: iso(7),
        asn: 4242420055,
        has_flaps: false,
        name: null,
        severity: null,
        prefix_count: 0,
        prefixes_flapping: 0,
        prefix_score_max: null,
        session_score_max: null,
        last_change_at: null,
        nodes: [],
        sessions: [],
        prefixes: [],
        alerts: [],
      });
      expectResponse(await anonymous.get('/autopeering/my/flaps?prefixes_limit=0', { token: quiet })).status(422);
    });
  });

  describe('the allow-lists', () => {
    /** A copy with a field the console might add one day, in every object at every depth. */
    function withConsoleOnlyField(value: unknown): any {
      if (Array.isArray(value)) return value.map(withConsoleOnlyField);
      if (value && typeof value === 'object')
        return { ...Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withConsoleOnlyField(v)])), console_only: 'x' };
      return value;
    }
    const ui = async (path: string) => {
      const res = await h.admin.get(path);
      expectResponse(res).status(200);
      return res.body;
    };

    it('lets no field the console adds to a builder through, at any depth, and the rest unchanged', async () => {
      const dashboard = await ui('/ui/dashboard?as_traffic=1&range=6h');
      const peer = await ui(`/ui/fleet/flap-peers/${OWN_AS}`);
      const cases: [string, unknown, (v: any) => unknown][] = [
        ['overview', await ui('/ui/fleet/overview'), allow.portalOverview],
        ['traffic', await ui('/ui/fleet/traffic?range=6h&compare=1'), allow.portalTrafficTrend],
        ['breakdown', await ui('/ui/fleet/traffic-breakdown'), allow.portalTrafficBreakdown],
        ['routing', dashboard.routing, allow.portalRouting],
        ['traffic_by_as', dashboard.traffic_by_as, allow.portalTrafficByAs],
        ['traffic_mix', dashboard.traffic_mix, allow.portalTrafficMix],
        ['prefix flaps', await ui('/ui/fleet/prefix-flaps?min_score=0'), allow.portalPrefixFlaps],
        ['grouped prefix flaps', await ui('/ui/fleet/prefix-flaps?group=prefix&min_score=0'), allow.portalPrefixFlaps],
        ['flap stats', await ui('/ui/fleet/flap-stats'), allow.portalFlapStats],
        ['my flaps', peer, (d) => allow.portalMyFlaps(OWN_AS, d.generated_at, d)],
      ];
      for (const [what, answer, allowList] of cases) {
        const kept = allowList(withConsoleOnlyField(answer));
        expect([...keysOf(kept)], what).to.not.include('console_only');
        expect(kept, what).to.deep.equal(allowList(answer));
      }
    });

    it('keeps overview rows and breakdown peers to the fields document 3 names', () => {
      expect([...allow.OVERVIEW_NODE_FIELDS].sort()).to.deep.equal(['capabilities', 'geo', 'health', 'node_id', 'region', 'site']);
      expect([...allow.BREAKDOWN_PEER_FIELDS].sort()).to.deep.equal(['interface', 'node_id', 'rx_bytes_per_sec', 'tx_bytes_per_sec']);
    });
  });

  describe('what never leaks', () => {
    /** Every GET of the portal in the OpenAPI document (login routes aside), with variants of the view's parameters. */
    async function portalReads(): Promise<string[]> {
      const doc = (await anonymous.get('/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
      const paths = Object.entries(doc.paths)
        .filter(([path, methods]) => path.startsWith('/control/v1/autopeering/') && methods.get)
        .map(([path]) => path.slice('/control/v1'.length))
        .filter((path) => !path.startsWith('/autopeering/auth/') && path !== '/autopeering/session')
        .map((path) => path.replace('{node_id}', 'n1').replace(/\{\w+\}/g, '1'));
      // The session's own requests in detail (its adopted manual peering at n1 among them).
      const listed = (await portal.get('/autopeering/requests')).body;
      const rows: { id?: unknown }[] = Array.isArray(listed) ? listed : (Object.values(listed ?? {}).find(Array.isArray) ?? []);
      const details = rows.filter((r) => typeof r.id === 'number').map((r) => `/autopeering/requests/${r.id}`);
      expect(details, 'a request detail to scan').to.have.length.above(0);
      return [
        ...paths,
        ...details,
        '/autopeering/fleet/dashboard?as_traffic=1&compare=1&range=6h',
        '/autopeering/fleet/prefix-flaps?group=prefix&min_score=0',
        '/autopeering/fleet/prefix-flaps?min_score=0',
        '/autopeering/fleet/traffic-breakdown?top=200',
        '/autopeering/nodes/n2/traffic?compare=1',
      ];
    }

    it('finds the secrets the scan looks for in what the console serves about the same fleet', async () => {
      const text = (
        await Promise.all(['/ui/fleet/traffic-breakdown', '/admin/nodes', '/admin/nodes/n1/interfaces'].map(async (p) => (await h.admin.get(p)).text))
      ).join();
      const found = scanForLeaks(text);
      expect(found.wireguard_keys).to.include.members([OWN_KEY, OTHER_KEY, NODE_KEYS.n2]);
      expect(found.endpoints).to.include.members(['198.51.100.10:51820', '198.51.100.77:51820', 'n2.nodes.example.net:52801']);
      expect([...found.ipv4, ...found.ipv6]).to.include.members(['172.20.0.1', 'fd42:4242:1::1', '10.99.0.2']);
      expect([...keysOf(JSON.parse((await h.admin.get('/admin/nodes')).text))]).to.include.members(['base_template', 'inventory', 'router_id']);
    });

    it('no portal answer carries a key, an endpoint, an address of our nodes, a token, base_template or inventory', async () => {
      const doc = (await anonymous.get('/openapi.json')).body;
      const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
      const reads = await portalReads();
      expect(reads).to.include.members(VIEW_PATHS);
      for (const path of reads) {
        const res = await portal.get(path);
        expect(res.status, `${path}: ${res.text.slice(0, 200)}`).to.be.below(500);
        const view = VIEW_PATHS.some((p) => path.startsWith(p));
        // Outside the network view the user's own peering may show: its key, endpoint and link-local, our node's key and link-local (to dial in).
        const own: readonly string[] = view ? [] : OWN_PEERING;
        const found = scanForLeaks(res.text, [...secrets, token, 'nodes.example.net']);
        expect(
          found.wireguard_keys.filter((k) => !own.includes(k)),
          path,
        ).to.deep.equal([]);
        expect(
          found.endpoints.filter((e) => !own.includes(e) && !own.includes(e.split(':')[0])),
          path,
        ).to.deep.equal([]);
        expect(found.tokens, path).to.deep.equal([]);
        expect(
          [...found.ipv4, ...found.ipv6].filter((a) => NODE_ADDRESSES.includes(a) && !own.includes(a)),
          path,
        ).to.deep.equal([]);
        for (const endpoint of PEER_ENDPOINTS.filter((e) => !own.includes(e))) expect(res.text, path).to.not.include(endpoint.split(':')[0]);
        const keys = keysOf(res.body);
        const forbidden = view ? VIEW_FORBIDDEN_KEYS : PORTAL_FORBIDDEN_KEYS;
        expect(
          forbidden.filter((k) => keys.has(k)),
          path,
        ).to.deep.equal([]);
        // And the answer is the one documented for its status.
        const template = Object.keys(doc.paths).find((p) => new RegExp(`^${p.replace(/\{\w+\}/g, '[^/]+')}$`).test(`/control/v1${path.split('?')[0]}`))!;
        const response = doc.paths[template].get.responses[String(res.status)];
        expect(response, `${path} answered ${res.status}`).to.be.an('object');
        if (res.status !== 204) {
          const validate = ajv.compile({ ...response.content['application/json'].schema, components: doc.components });
          expect(validate(res.body), `${path}: ${ajv.errorsText(validate.errors)}`).to.equal(true);
        }
      }
    });
  });
});
