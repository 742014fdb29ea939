import { expect } from 'chai';
import { issueAgentToken } from '../../../support/agents.js';
import { api, expectResponse } from '../../../support/http.js';
import { ADMIN_TOKEN, node, startFleet, type FleetHarness } from '../fleet/support.js';

const ASN = 4242420001;
const route = (prefix: string, protocol: string, as_path: number[] = []) => ({
  prefix,
  protocol,
  origin_asn: as_path.at(-1) ?? null,
  as_path,
  rpki: null,
  local: as_path.length === 0,
});

describe('console: GET /ui/nodes/{id}/internal-topology', () => {
  let h: FleetHarness;

  /**
   * Node `a` and its neighbours: `b` over an internal peering with a WireGuard
   * link (OSPF adjacency), `c` named in a's template (IPv4 loopback only), `d-1`
   * peering internally towards `a` (inbound); `ghost` is named in the template but
   * does not exist. `a` serves a host `svc`.
   */
  beforeEach(async () => {
    h = await startFleet();
    const create = async (id: string, v4: string, v6: string | null, extra: Record<string, unknown> = {}) =>
      expectResponse(await h.client.post('/admin/nodes', node(id, { router_id: v4, loopback_ipv4: v4, loopback_ipv6: v6, ...extra }))).status(201);
    await create('a', '172.20.0.1', 'fd42:4242:1::1', {
      base_template: {
        bird: { internal_topology: { routers: ['c', 'ghost'], hosts: [{ name: 'svc', addresses: ['172.20.0.50/32', 'fd42:4242:1::50'], interface: 'br0' }] } },
      },
    });
    await create('b', '172.20.0.2', 'fd42:4242:2::1');
    await create('c', '172.20.0.3', null);
    await create('d-1', '172.20.0.4', 'fd42:4242:4::1');
    const toB = await h.client.post('/admin/nodes/a/peerings', { name: 'to_b', remote_asn: ASN, remote_node_id: 'b', is_internal: true });
    expectResponse(toB).status(201);
    expectResponse(await h.client.post('/admin/nodes/a/interfaces', { spec: { name: 'int_b', listen_port: 52801, cost: 50 }, peering_id: toB.body.id })).status(
      201,
    );
    expectResponse(await h.client.post('/admin/nodes/d-1/peerings', { name: 'to_a', remote_asn: ASN, remote_node_id: 'a', is_internal: true })).status(201);
  });
  afterEach(async () => {
    await h.close();
  });

  const topology = () => h.client.get('/ui/nodes/a/internal-topology');
  async function postTable(routes: unknown[]) {
    const { token } = await issueAgentToken(h.url, ADMIN_TOKEN, 'a');
    const body = { node_id: 'a', captured_at: h.sys.clock.now().toISOString(), rpki_observed: false, routes };
    expectResponse(await api(`${h.url}/control/v1`, { token }).post('/agent/routing-table', body)).status(200);
  }

  it('without a routing table: the published topology with every hint null', async () => {
    const res = await topology();
    expectResponse(res).status(200);
    const generation = (await h.client.get('/admin/nodes/a')).body.current_generation;
    expect(generation).to.be.greaterThan(0);
    expect(res.body).to.deep.equal({
      node_id: 'a',
      generation,
      captured_at: null,
      routers: [
        {
          node_id: 'b',
          asn: ASN,
          router_id: '172.20.0.2',
          loopback_ipv4: '172.20.0.2',
          loopback_ipv6: 'fd42:4242:2::1',
          sources: ['peering'],
          sessions: [
            { protocol: 'ibgp_b_v4', family: 'v4', neighbor: '172.20.0.2', rib_routes: null, in_rib: null },
            { protocol: 'ibgp_b_v6', family: 'v6', neighbor: 'fd42:4242:2::1', rib_routes: null, in_rib: null },
          ],
          rib_routes: null,
          in_rib: null,
        },
        {
          node_id: 'c',
          asn: ASN,
          router_id: '172.20.0.3',
          loopback_ipv4: '172.20.0.3',
          loopback_ipv6: null,
          sources: ['template'],
          sessions: [{ protocol: 'ibgp_c_v4', family: 'v4', neighbor: '172.20.0.3', rib_routes: null, in_rib: null }],
          rib_routes: null,
          in_rib: null,
        },
        {
          node_id: 'd-1',
          asn: ASN,
          router_id: '172.20.0.4',
          loopback_ipv4: '172.20.0.4',
          loopback_ipv6: 'fd42:4242:4::1',
          sources: ['inbound'],
          sessions: [
            { protocol: 'ibgp_d-1_v4', family: 'v4', neighbor: '172.20.0.4', rib_routes: null, in_rib: null },
            { protocol: 'ibgp_d-1_v6', family: 'v6', neighbor: 'fd42:4242:4::1', rib_routes: null, in_rib: null },
          ],
          rib_routes: null,
          in_rib: null,
        },
      ],
      unresolved_routers: ['ghost'],
      adjacencies: [{ interface: 'int_b', node_id: 'b', cost: 50 }],
      ospf: [
        { protocol: 'ospf_v4', family: 'v4', rib_routes: null },
        { protocol: 'ospf_v6', family: 'v6', rib_routes: null },
      ],
      hosts: [
        {
          name: 'svc',
          interface: 'br0',
          addresses: [
            { address: '172.20.0.50/32', prefix: '172.20.0.50/32', in_rib: null },
            { address: 'fd42:4242:1::50', prefix: 'fd42:4242:1::50/128', in_rib: null },
          ],
        },
      ],
    });
  });

  it('counts the routes of each session and OSPF protocol and finds host routes in the latest table posted by the agent (0 and false measured)', async () => {
    await postTable([
      route('172.20.0.2/32', 'ospf_v4'),
      route('FD42:4242:2::1/128', 'ospf_v6'),
      route('172.20.5.0/24', 'ibgp_b_v4', [4242420005]),
      route('172.20.6.0/24', 'ibgp_b_v4', [4242420005, 4242420006]),
      route('fd42:5::/48', 'ibgp_d-1_v6', [4242420005]),
      route('172.20.0.50/32', 'hosts_v4'),
      route('172.20.7.0/24', 'ebgp_peer', [4242420007]),
    ]);
    // The routes are stored once, as rows: the hints cannot come from a jsonb copy.
    const stored = await h.sys.pool.query(
      `SELECT t.routes, (SELECT count(*)::int FROM routing_routes r WHERE r.node_id = t.node_id) AS rows FROM routing_tables t WHERE node_id = 'a'`,
    );
    expect(stored.rows).to.deep.equal([{ routes: null, rows: 7 }]);
    const res = await topology();
    expectResponse(res).status(200).body({ captured_at: '2026-11-01T12:00:00.000Z' });
    const [b, c, d] = res.body.routers;
    expect(b.sessions.map((s: { rib_routes: number; in_rib: boolean }) => [s.rib_routes, s.in_rib])).to.deep.equal([
      [2, true],
      [0, true],
    ]);
    expect([b.rib_routes, b.in_rib]).to.deep.equal([2, true]);
    expect(c.sessions).to.deep.equal([{ protocol: 'ibgp_c_v4', family: 'v4', neighbor: '172.20.0.3', rib_routes: 0, in_rib: false }]);
    expect([c.rib_routes, c.in_rib]).to.deep.equal([0, false]);
    expect(d.sessions.map((s: { rib_routes: number; in_rib: boolean }) => [s.rib_routes, s.in_rib])).to.deep.equal([
      [0, false],
      [1, false],
    ]);
    expect([d.rib_routes, d.in_rib]).to.deep.equal([1, false]);
    expect(res.body.ospf).to.deep.equal([
      { protocol: 'ospf_v4', family: 'v4', rib_routes: 1 },
      { protocol: 'ospf_v6', family: 'v6', rib_routes: 1 },
    ]);
    expect(res.body.hosts[0].addresses.map((a: { in_rib: boolean }) => a.in_rib)).to.deep.equal([true, false]);

    // The next table replaces the hints.
    h.sys.clock.advance(300_000);
    await postTable([route('172.20.0.3/32', 'ospf_v4'), route('172.20.8.0/24', 'ibgp_c_v4', [4242420008])]);
    const next = (await topology()).body;
    expect(next.captured_at).to.equal('2026-11-01T12:05:00.000Z');
    expect(next.routers.map((r: { rib_routes: number; in_rib: boolean }) => [r.rib_routes, r.in_rib])).to.deep.equal([
      [0, false],
      [1, true],
      [0, false],
    ]);
    expect(next.hosts[0].addresses.map((a: { in_rib: boolean }) => a.in_rib)).to.deep.equal([false, false]);
  });

  it('follows the published state: a router dropped from the template and the node of a disabled inbound peering leave', async () => {
    const template = (await h.client.get('/admin/nodes/a')).body.base_template;
    template.bird.internal_topology.routers = ['ghost'];
    expectResponse(await h.client.patch('/admin/nodes/a', { base_template: template })).status(200);
    const toA = (await h.client.get('/admin/nodes/d-1/peerings')).body[0];
    expectResponse(await h.client.patch(`/admin/peerings/${toA.id}`, { enabled: false })).status(200);
    const res = await topology();
    expectResponse(res)
      .status(200)
      .body({ generation: (await h.client.get('/admin/nodes/a')).body.current_generation, unresolved_routers: ['ghost'] });
    expect(res.body.routers.map((r: { node_id: string; sources: string[] }) => [r.node_id, r.sources])).to.deep.equal([['b', ['peering']]]);
  });

  it('answers no OSPF protocols without an adjacency', async () => {
    expectResponse(await h.client.post('/admin/nodes', node('solo', { loopback_ipv6: null }))).status(201);
    expectResponse(await h.client.post('/admin/nodes/solo/interfaces', { spec: { name: 'dn42_x', listen_port: 51801 } })).status(201);
    const res = await h.client.get('/ui/nodes/solo/internal-topology');
    expectResponse(res).status(200).body({ routers: [], adjacencies: [], ospf: [], hosts: [], unresolved_routers: [] });
  });

  it('answers 404 for an unknown node and for a node without a published desired state', async () => {
    expectResponse(await h.client.get('/ui/nodes/ghost/internal-topology'))
      .status(404)
      .detail('unknown node ghost');
    expectResponse(await h.client.post('/admin/nodes', node('fresh'))).status(201);
    expectResponse(await h.client.get('/ui/nodes/fresh/internal-topology'))
      .status(404)
      .detail('no desired state for node fresh');
  });
});
