import { expect } from 'chai';
import { createControlApp } from '../../../../http/control/app.js';
import { recordHeartbeat } from '../../../../infra/telemetry/liveness.js';
import { issueAgentToken } from '../../../support/agents.js';
import { api, expectResponse } from '../../../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { reconciliation, snapshot } from '../agent/telemetry-support.js';
import { scanForLeaks, type Leaks } from './leaks.js';

const ADMIN_TOKEN = 'public-spec-admin-token-0123456789';
const KEYS: Record<string, string> = {
  'edge-fra-1': 'aQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=',
  'edge-fra-2': 'bQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=',
  'core-ams-7': 'cQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=',
};
const PEER_KEY = 'pQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';

/** A node record full of what must stay private: addresses, prefixes, a hostname. */
const nodeRecord = (node_id: string, site: string | null, n: number, extra: Record<string, unknown> = {}) => ({
  node_id,
  asn: 4242420001,
  router_id: `172.20.0.${n}`,
  site,
  loopback_ipv4: `172.20.0.${n}`,
  loopback_ipv6: `fd42:4242:1::${n}`,
  link_local: `fe80::${n}`,
  ipv4_prefixes: ['172.20.0.0/27'],
  ipv6_prefixes: ['fd42:4242:1::/48'],
  inventory: { hostname: `${node_id}.nodes.example.net`, capabilities: ['bird', 'wireguard'] },
  ...extra,
});

/** An internal WireGuard link with private addresses, an endpoint and an OSPF cost. */
const internalLink = (name: string, remote: string, port: number, cost: number) => ({
  peering: { name, remote_asn: 4242420001, remote_node_id: remote, is_internal: true },
  interface_spec: {
    name,
    listen_port: port,
    addresses: [`10.99.0.${port - 52799}/31`, 'fe80::99/64'],
    cost,
    peer: { endpoint: `${remote}.nodes.example.net:${port}` },
  },
});

const routes = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    prefix: `172.22.${i}.0/24`,
    protocol: 'peer1',
    origin_asn: 4242420002,
    as_path: [4242420002],
    rpki: 'valid',
    local: false,
  }));

describe('control: public map and fleet', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  let close: () => Promise<void>;
  let admin: ReturnType<typeof api>;
  let anonymous: ReturnType<typeof api>;
  const secrets: string[] = [ADMIN_TOKEN];

  before(async () => {
    sys = await createTestSystem({ env: { ADMIN_TOKEN } });
    const started = await startApp(createControlApp(sys.context));
    close = async () => {
      await started.close();
      await sys.close();
    };
    admin = api(`${started.url}/control/v1`, { token: ADMIN_TOKEN });
    anonymous = api(`${started.url}/control/v1`);

    const ok = async (p: Promise<{ status: number; text: string }>, status = 201) => expectResponse((await p) as never).status(status);
    await ok(admin.post('/admin/nodes', nodeRecord('edge-fra-1', 'fra1', 1, { labels: { region: 44 } })));
    await ok(admin.post('/admin/nodes', nodeRecord('edge-fra-2', 'FRA-2', 2)));
    await ok(admin.post('/admin/nodes', nodeRecord('core-ams-7', 'ams1', 7)));
    await ok(admin.post('/admin/nodes', nodeRecord('lab-xyz-9', 'xyz9', 9)));
    await ok(admin.post('/admin/nodes', nodeRecord('spare-sin-3', 'sin1', 3)));

    await ok(admin.post('/admin/nodes/edge-fra-1/peerings/provision', internalLink('wg_ams7', 'core-ams-7', 52801, 50)));
    await ok(admin.post('/admin/nodes/edge-fra-1/peerings/provision', internalLink('wg_fra2', 'edge-fra-2', 52802, 10)));
    await ok(admin.post('/admin/nodes/edge-fra-2/peerings/provision', internalLink('wg_ams7', 'core-ams-7', 52803, 60)));
    await ok(admin.post('/admin/nodes/spare-sin-3/peerings/provision', internalLink('wg_fra1', 'edge-fra-1', 52804, 90)));
    await ok(
      admin.post('/admin/nodes/core-ams-7/peerings/provision', {
        peering: { name: 'as4242420002', remote_asn: 4242420002 },
        interface_spec: { name: 'dn42_0002', listen_port: 51801, peer: { public_key: PEER_KEY, endpoint: '198.51.100.7:51820' }, peer_link_local: 'fe80::2' },
        bgp_spec: { name: 'dn42_0002', remote_asn: 4242420002, neighbor_address: 'fe80::2', interface: 'dn42_0002' },
      }),
    );
    await ok(admin.post('/admin/nodes/spare-sin-3/decommission'), 200);
    await ok(admin.put('/admin/autopeering/nodes/core-ams-7', { enabled: true, endpoint_host: '203.0.113.9' }), 200);
    await ok(admin.put('/admin/autopeering/nodes/edge-fra-1', { enabled: true, endpoint_host: 'fra1.peering.example.net' }), 200);
    const enrollment = await admin.post('/admin/enrollment-tokens', { node_id: 'lab-xyz-9' });
    expectResponse(enrollment).status(201);
    secrets.push(enrollment.body.secret);

    const tables: Record<string, number> = { 'edge-fra-1': 3, 'edge-fra-2': 4, 'core-ams-7': 5 };
    for (const id of ['edge-fra-1', 'edge-fra-2', 'core-ams-7']) {
      const { token } = await issueAgentToken(started.url, ADMIN_TOKEN, id);
      secrets.push(token, token.slice(token.indexOf('.') + 1));
      const agent = api(`${started.url}/control/v1`, { token });
      await ok(agent.post('/agent/wireguard-keys', { node_id: id, public_key: KEYS[id] }), 200);
      const sessions: Record<string, string> =
        id === 'edge-fra-2' ? { ibgp_ams: 'established', dn42_x: 'idle' } : { ibgp: 'established', dn42_0002: 'established' };
      await ok(agent.post('/agent/runtime-snapshot', snapshot(id, sessions)), 200);
      await ok(agent.post('/agent/routing-table', { node_id: id, captured_at: '2026-11-01T12:00:00Z', rpki_observed: true, routes: routes(tables[id]) }), 200);
      await ok(agent.post('/agent/reconciliation-report', reconciliation(id)), 200);
      await recordHeartbeat(sys.pool, id, { agent_version: '1.0.217', applied_generation: 1, apply_status: 'succeeded' }, sys.clock.now());
    }
    await sys.context.background.drain();
  });
  after(async () => close?.());

  /** Everything the admin API serves about the seeded fleet: proof that the seed holds what the scan looks for. */
  async function adminText(): Promise<string> {
    const paths = ['/admin/nodes', '/admin/health', '/admin/autopeering/nodes', '/admin/enrollment-tokens'];
    for (const id of ['edge-fra-1', 'core-ams-7']) paths.push(`/admin/nodes/${id}/interfaces`, `/admin/nodes/${id}/health`, `/admin/nodes/${id}/agent-tokens`);
    const texts = await Promise.all(paths.map(async (p) => (await admin.get(p)).text));
    return texts.join('\n') + secrets.join('\n');
  }

  describe('the leak scan', () => {
    it('finds every kind of secret in what the admin API serves about the seeded fleet', async () => {
      const found = scanForLeaks(await adminText(), secrets);
      expect(found.ipv4).to.include.members(['172.20.0.1', '203.0.113.9']);
      expect(found.ipv6).to.include.members(['fd42:4242:1::7', 'fe80::2']);
      expect(found.wireguard_keys).to.include.members([KEYS['core-ams-7'], PEER_KEY]);
      expect(found.endpoints).to.include.members(['198.51.100.7:51820', 'core-ams-7.nodes.example.net:52801', '192.0.2.1:51820']);
      expect(found.tokens.some((t) => t.startsWith('agt_'))).to.equal(true);
      expect(found.tokens).to.include(ADMIN_TOKEN);
    });

    it('ignores timestamps, versions and coordinates', () => {
      expect(scanForLeaks('{"t":"2026-11-01T12:00:00.000Z","v":"1.0.217","lat":50.1,"ports":"51800-51830","x":"a::b"}')).to.deep.equal({
        ipv4: [],
        ipv6: ['a::b'],
        wireguard_keys: [],
        endpoints: [],
        tokens: [],
      });
    });
  });

  describe('GET /public/map', () => {
    it('needs no credential and answers with Cache-Control: public, max-age=300', async () => {
      const res = await anonymous.get('/public/map');
      expectResponse(res)
        .status(200)
        .header('cache-control', 'public, max-age=300')
        .header('content-type', /^application\/json/);
    });

    it('shows cities, not nodes: folded points, city links, online counts, established sessions and the median table', async () => {
      const map = (await anonymous.get('/public/map')).body;
      expect(map).to.deep.equal({
        asn: 4242420001,
        updated_at: sys.clock.now().toISOString(),
        stats: { nodes_online: 3, bgp_sessions: 5, routes: 4 },
        nodes: [
          { label: 'AMS', lat: 52.4, lon: 4.9, city: 'Amsterdam', country: 'NL', region: 41, online: true, sessions: 2 },
          // edge-fra-1 (own region 44) comes first by node id and decides the folded point's region.
          { label: 'FRA', lat: 50.1, lon: 8.7, city: 'Frankfurt', country: 'DE', region: 44, online: true, sessions: 3 },
        ],
        links: [['AMS', 'FRA']],
      });
    });

    it('holds no address, key, endpoint, token, node id, agent version, hostname or health detail', async () => {
      const text = (await anonymous.get('/public/map')).text;
      expect(scanForLeaks(text, secrets)).to.deep.equal(noLeaks());
      for (const word of ['edge-fra-1', 'core-ams-7', 'lab-xyz-9', '1.0.217', 'example.net', 'health', 'reasons', 'degraded', 'agent', 'node_id'])
        expect(text, word).to.not.include(word);
    });
  });

  describe('GET /public/fleet', () => {
    it('needs no credential and answers with Cache-Control: public, max-age=60', async () => {
      expectResponse(await anonymous.get('/public/fleet'))
        .status(200)
        .header('cache-control', 'public, max-age=60');
    });

    it('shows active nodes with health, generation, drift, agent, capabilities, geo and WireGuard adjacency', async () => {
      const fleet = (await anonymous.get('/public/fleet')).body;
      expect(fleet.nodes.map((n: { node_id: string }) => n.node_id)).to.deep.equal(['core-ams-7', 'edge-fra-1', 'edge-fra-2', 'lab-xyz-9']);
      expect(fleet.summary).to.deep.equal({ total: 4, ok: 2, degraded: 1, stale: 0, down: 0, unknown: 1 });
      expect(fleet.agent_summary).to.deep.equal({ online: 3, stale: 0, offline: 1, agents_behind: 0 });
      expect(fleet.links).to.deep.equal([
        { a: 'core-ams-7', b: 'edge-fra-1' },
        { a: 'core-ams-7', b: 'edge-fra-2' },
        { a: 'edge-fra-1', b: 'edge-fra-2' },
      ]);
      const fra1 = fleet.nodes[1];
      expect(fra1).to.deep.equal({
        node_id: 'edge-fra-1',
        site: 'fra1',
        region: 44,
        geo: { lat: 50.1, lon: 8.7, city: 'Frankfurt', country: 'DE', region: 44 },
        health: 'ok',
        liveness: 'online',
        generation: (await admin.get('/admin/nodes/edge-fra-1')).body.current_generation,
        drift_count: 2,
        agent_version: '1.0.217',
        last_heartbeat_at: sys.clock.now().toISOString(),
        capabilities: ['bird', 'wireguard'],
        adjacencies: [
          { interface: 'wg_ams7', node_id: 'core-ams-7', cost: 50 },
          { interface: 'wg_fra2', node_id: 'edge-fra-2', cost: 10 },
        ],
      });
      expect(fleet.nodes[3]).to.deep.include({ node_id: 'lab-xyz-9', geo: null, region: null, health: 'unknown', liveness: 'offline', agent_version: null });
    });

    it('holds no address, key, endpoint, token or hostname', async () => {
      const text = (await anonymous.get('/public/fleet')).text;
      expect(scanForLeaks(text, secrets)).to.deep.equal(noLeaks());
      expect(text).to.not.include('example.net');
      expect(text).to.not.include('inventory');
    });
  });

  describe('caching', () => {
    it('returns the cached map, updated_at included, for 300 s, then generates it again', async () => {
      const first = await anonymous.get('/public/map');
      const t0 = sys.clock.now();
      expect(first.body.updated_at).to.equal(t0.toISOString());
      expectResponse(await admin.post('/admin/nodes', nodeRecord('edge-par-1', 'par1', 11))).status(201);

      sys.clock.advance(299_999);
      const hit = await anonymous.get('/public/map');
      expect(hit.text).to.equal(first.text);
      expect(hit.body.nodes.map((n: { label: string }) => n.label)).to.not.include('PAR');

      sys.clock.advance(1);
      const miss = await anonymous.get('/public/map');
      expect(miss.body.updated_at).to.equal(new Date(t0.getTime() + 300_000).toISOString());
      expect(miss.body.nodes.map((n: { label: string }) => n.label)).to.include('PAR');
    });

    it('returns the cached fleet for 60 s', async () => {
      const first = await anonymous.get('/public/fleet');
      const t0 = Date.parse(first.body.generated_at);
      await admin.patch('/admin/nodes/edge-par-1', { site: 'lon1' });
      sys.clock.current = new Date(t0 + 59_999);
      expect((await anonymous.get('/public/fleet')).text).to.equal(first.text);
      sys.clock.current = new Date(t0 + 60_000);
      const miss = (await anonymous.get('/public/fleet')).body;
      expect(miss.generated_at).to.equal(new Date(t0 + 60_000).toISOString());
      expect(miss.nodes.find((n: { node_id: string }) => n.node_id === 'edge-par-1').site).to.equal('lon1');
    });

    it('answers 304 to a matching If-None-Match, with the same Cache-Control', async () => {
      const res = await anonymous.get('/public/map');
      const etag = res.headers.get('etag');
      expect(etag).to.match(/^W\/"/);
      // fetch adds `Cache-Control: no-cache` to a conditional request unless one is given; no-cache means "send it all".
      const again = await anonymous.get('/public/map', { headers: { 'if-none-match': etag!, 'cache-control': 'max-age=0' } });
      expectResponse(again).status(304).header('cache-control', 'public, max-age=300');
    });
  });
});

function noLeaks(): Leaks {
  return { ipv4: [], ipv6: [], wireguard_keys: [], endpoints: [], tokens: [] };
}
