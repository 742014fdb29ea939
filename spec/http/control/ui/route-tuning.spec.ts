import { expect } from 'chai';
import { issueAgentToken } from '../../../support/agents.js';
import { api, expectResponse } from '../../../support/http.js';
import { auditEntries } from '../support.js';
import { ADMIN_TOKEN, bgp, node, startFleet, wg, type FleetHarness } from '../fleet/support.js';

describe('console: route tuning and link latency', () => {
  let h: FleetHarness;
  const template = {
    runtime: { wireguard_port_range: '51800-51830' },
    bird: { blocked_prefixes: ['172.20.9.0/24'], import_limit: 9000 },
    custom: { keep: true },
  };

  beforeEach(async () => {
    h = await startFleet();
    expectResponse(await h.client.post('/admin/nodes', node('fra1', { base_template: template }))).status(201);
    // Generation 1 and 2: an interface, then a session over it.
    expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_peer', 51801) })).status(201);
    expectResponse(await h.client.post('/admin/nodes/fra1/bgp-sessions', { spec: bgp('peer_a', 4242420002, { link_latency: 3 }), sort_order: 2 })).status(201);
  });
  afterEach(async () => {
    await h.close();
  });

  const generations = async (nodeId = 'fra1'): Promise<{ generation: number; reason: string }[]> =>
    (await h.client.get(`/admin/nodes/${nodeId}/generations`)).body.generations;
  const published = () => h.sys.broadcaster.published.map((p) => `${p.node_id}:${p.generation}`);
  /** Events other than audit entries (a refused or no-op write is audited too). */
  const writeEvents = async () => Number((await h.sys.pool.query(`SELECT count(*) AS n FROM events WHERE type <> 'AuditRecorded'`)).rows[0].n);
  const desiredBird = async () => (await h.client.get('/admin/nodes/fra1/desired-state')).body.state.bird;

  it('GET answers every field: unset MED null, no rules [], the sessions by sort order with link_latency null when unset', async () => {
    const second = await h.client.post('/admin/nodes/fra1/bgp-sessions', { spec: bgp('peer_b', 4242420003), sort_order: 1 });
    expectResponse(second).status(201);
    const first = (await h.client.get('/admin/nodes/fra1/bgp-sessions')).body.find((s: { name: string }) => s.name === 'peer_a');
    const stored = (await h.client.get('/admin/nodes/fra1')).body;
    const res = await h.client.get('/ui/nodes/fra1/route-tuning');
    expectResponse(res).status(200);
    expect(res.body).to.deep.equal({
      node_id: 'fra1',
      cold_potato_med: null,
      route_local_pref: [],
      sessions: [
        { id: second.body.id, name: 'peer_b', remote_asn: 4242420003, link_latency: null },
        { id: first.id, name: 'peer_a', remote_asn: 4242420002, link_latency: 3 },
      ],
      updated_at: stored.updated_at,
    });
  });

  it('answers 404 for an unknown node on GET and PUT', async () => {
    expectResponse(await h.client.get('/ui/nodes/ghost/route-tuning'))
      .status(404)
      .detail('unknown node ghost');
    expectResponse(await h.client.put('/ui/nodes/ghost/route-tuning', { cold_potato_med: 50 }))
      .status(404)
      .detail('unknown node ghost');
  });

  it('PUT merges field by field into base_template.bird, leaves every other key alone, publishes one generation and rings the doorbell', async () => {
    h.sys.clock.advance(60_000);
    const res = await h.client.put('/ui/nodes/fra1/route-tuning', { cold_potato_med: 50 });
    expectResponse(res).status(200).body({ node_id: 'fra1', cold_potato_med: 50, route_local_pref: [], updated_at: '2026-11-01T12:01:00.000Z' });
    expect(res.body.sessions).to.have.length(1);
    expect((await h.client.get('/admin/nodes/fra1')).body.base_template).to.deep.equal({ ...template, bird: { ...template.bird, cold_potato_med: 50 } });
    expect((await generations())[0]).to.include({ generation: 3, reason: 'route tuning updated (cold_potato_med)' });
    expect(published()).to.deep.equal(['fra1:1', 'fra1:2', 'fra1:3']);
    expect((await desiredBird()).cold_potato_med).to.equal(50);

    // The other field alone: the MED stays.
    const rules = [
      { prefix: '172.20.0.0/14', local_pref: 200 },
      { prefix: 'fd00::/8', local_pref: 90 },
    ];
    const next = await h.client.put('/ui/nodes/fra1/route-tuning', { route_local_pref: rules });
    expectResponse(next).status(200).body({ cold_potato_med: 50, route_local_pref: rules });
    expect((await h.client.get('/admin/nodes/fra1')).body.base_template).to.deep.equal({
      ...template,
      bird: { ...template.bird, cold_potato_med: 50, route_local_pref: rules },
    });
    expect((await generations())[0]).to.include({ generation: 4, reason: 'route tuning updated (route_local_pref)' });
    expect(published()).to.deep.equal(['fra1:1', 'fra1:2', 'fra1:3', 'fra1:4']);
    expect((await desiredBird()).route_local_pref).to.deep.equal(rules);
    expect((await h.client.get('/ui/nodes/fra1/route-tuning')).body).to.deep.equal(next.body);
    const audited = (await auditEntries(h.sys)).filter((e) => e.path === '/control/v1/ui/nodes/fra1/route-tuning');
    expect(audited.map((e) => [e.method, e.status_code, e.actor])).to.deep.equal([
      ['PUT', 200, 'admin'],
      ['PUT', 200, 'admin'],
    ]);
  });

  it('a PUT that changes nothing appends nothing and publishes nothing: {}, the current values, non-canonical spellings of them, or clearing what is unset', async () => {
    expectResponse(
      await h.client.put('/ui/nodes/fra1/route-tuning', { cold_potato_med: 7, route_local_pref: [{ prefix: '172.20.0.0/24', local_pref: 120 }] }),
    ).status(200);
    const before = (await h.client.get('/ui/nodes/fra1/route-tuning')).body;
    const events = await writeEvents();
    h.sys.clock.advance(60_000);
    for (const body of [
      {},
      { cold_potato_med: 7 },
      { route_local_pref: [{ prefix: '172.20.0.9/24', local_pref: 120 }] },
      { cold_potato_med: 7, route_local_pref: before.route_local_pref },
    ]) {
      const res = await h.client.put('/ui/nodes/fra1/route-tuning', body);
      expectResponse(res).status(200);
      expect(res.body, JSON.stringify(body)).to.deep.equal(before);
    }
    expect((await generations()).map((g) => g.generation)).to.deep.equal([3, 2, 1]);
    expect(published()).to.deep.equal(['fra1:1', 'fra1:2', 'fra1:3']);
    expect(await writeEvents()).to.equal(events);

    // A node without tuning: clearing both is no change either.
    expectResponse(await h.client.post('/admin/nodes', node('fra2'))).status(201);
    expectResponse(await h.client.put('/ui/nodes/fra2/route-tuning', { cold_potato_med: null, route_local_pref: [] }))
      .status(200)
      .body({ cold_potato_med: null, route_local_pref: [] });
    expect(await writeEvents()).to.equal(events + 1);
  });

  it('null clears the MED and [] the rules: the keys leave bird, an emptied bird leaves the template', async () => {
    expectResponse(await h.client.post('/admin/nodes', node('fra2', { base_template: { custom: 1 } }))).status(201);
    expectResponse(await h.client.post('/admin/nodes/fra2/interfaces', { spec: wg('dn42_x', 51805) })).status(201);
    expectResponse(await h.client.put('/ui/nodes/fra2/route-tuning', { cold_potato_med: 0, route_local_pref: [{ prefix: '10.0.0.0/8', local_pref: 1 }] }))
      .status(200)
      .body({ cold_potato_med: 0 });
    expect((await h.client.get('/admin/nodes/fra2')).body.base_template).to.deep.equal({
      custom: 1,
      bird: { cold_potato_med: 0, route_local_pref: [{ prefix: '10.0.0.0/8', local_pref: 1 }] },
    });
    expect((await generations('fra2'))[0]).to.include({ generation: 2, reason: 'route tuning updated (cold_potato_med, route_local_pref)' });

    expectResponse(await h.client.put('/ui/nodes/fra2/route-tuning', { cold_potato_med: null }))
      .status(200)
      .body({ cold_potato_med: null, route_local_pref: [{ prefix: '10.0.0.0/8', local_pref: 1 }] });
    expect((await h.client.get('/admin/nodes/fra2')).body.base_template).to.deep.equal({
      custom: 1,
      bird: { route_local_pref: [{ prefix: '10.0.0.0/8', local_pref: 1 }] },
    });
    expectResponse(await h.client.put('/ui/nodes/fra2/route-tuning', { route_local_pref: [] }))
      .status(200)
      .body({ cold_potato_med: null, route_local_pref: [] });
    expect((await h.client.get('/admin/nodes/fra2')).body.base_template).to.deep.equal({ custom: 1 });
    expect((await generations('fra2')).map((g) => g.generation)).to.deep.equal([4, 3, 2, 1]);
    const bird = (await h.client.get('/admin/nodes/fra2/desired-state')).body.state.bird;
    expect([bird.cold_potato_med, bird.route_local_pref]).to.deep.equal([null, []]);
  });

  it('stores rule prefixes canonical (host bits cleared, IPv6 compressed), in the order given', async () => {
    const res = await h.client.put('/ui/nodes/fra1/route-tuning', {
      route_local_pref: [
        { prefix: 'FD42:4242:0000::1/48', local_pref: 300 },
        { prefix: '172.20.1.77/24', local_pref: 0 },
      ],
    });
    expectResponse(res).status(200);
    expect(res.body.route_local_pref).to.deep.equal([
      { prefix: 'fd42:4242::/48', local_pref: 300 },
      { prefix: '172.20.1.0/24', local_pref: 0 },
    ]);
  });

  it('refuses bad values with 422, one error per invalid item, and writes nothing', async () => {
    const events = await writeEvents();
    const put = (body: unknown) => h.client.put('/ui/nodes/fra1/route-tuning', body);
    const locs = (res: { body: { detail: { errors: { loc: unknown[] }[] } } }) => res.body.detail.errors.map((e) => e.loc);

    const types = await put({
      cold_potato_med: -1,
      route_local_pref: [{ prefix: '10.0.0.0/8', local_pref: 1 }, { prefix: '10.1.0.0/16', local_pref: 4294967296 }, { prefix: '10.2.0.0/16' }, 'x'],
    });
    expectResponse(types).status(422);
    expect(locs(types)).to.deep.include.members([
      ['body', 'cold_potato_med'],
      ['body', 'route_local_pref', 1, 'local_pref'],
      ['body', 'route_local_pref', 2, 'local_pref'],
      ['body', 'route_local_pref', 3],
    ]);
    expect(locs(types).some((l) => l[2] === 0)).to.equal(false);

    const prefixes = await put({
      route_local_pref: [
        { prefix: '10.0.0.0/8', local_pref: 1 },
        { prefix: 'not-a-prefix', local_pref: 1 },
        { prefix: '10.0.0.0/33', local_pref: 1 },
        { prefix: '10.9.9.9/8', local_pref: 2 },
      ],
    });
    expectResponse(prefixes).status(422).detail('invalid route_local_pref');
    expect(locs(prefixes)).to.deep.equal([
      ['body', 'route_local_pref', 1, 'prefix'],
      ['body', 'route_local_pref', 2, 'prefix'],
      ['body', 'route_local_pref', 3, 'prefix'],
    ]);
    expect(prefixes.body.detail.errors[2].msg).to.equal('repeats the prefix of rule 0 (10.0.0.0/8)');

    expectResponse(await put({ cold_potato_med: 1.5 })).status(422);
    expectResponse(await put({ cold_potato_med: '50' })).status(422);
    expectResponse(await put({ blocked_prefixes: [] })).status(422);
    expectResponse(await put({ route_local_pref: Array.from({ length: 257 }, (_, i) => ({ prefix: `10.${i >> 8}.${i & 255}.0/24`, local_pref: 1 })) })).status(
      422,
    );
    expectResponse(await put({ route_local_pref: [{ prefix: '10.0.0.0/8', local_pref: 1, extra: true }] })).status(422);
    expect(await writeEvents()).to.equal(events);
    expect((await generations()).map((g) => g.generation)).to.deep.equal([2, 1]);
  });

  it('does not publish a node that was never published, and keeps both of two concurrent PUTs of different fields', async () => {
    expectResponse(await h.client.post('/admin/nodes', node('fra2'))).status(201);
    const [a, b] = await Promise.all([
      h.client.put('/ui/nodes/fra2/route-tuning', { cold_potato_med: 11 }),
      h.client.put('/ui/nodes/fra2/route-tuning', { route_local_pref: [{ prefix: '10.0.0.0/8', local_pref: 5 }] }),
    ]);
    expectResponse(a).status(200);
    expectResponse(b).status(200);
    expect((await h.client.get('/ui/nodes/fra2/route-tuning')).body).to.deep.include({
      cold_potato_med: 11,
      route_local_pref: [{ prefix: '10.0.0.0/8', local_pref: 5 }],
    });
    expect(await generations('fra2')).to.deep.equal([]);
    expect(published().filter((p) => p.startsWith('fra2:'))).to.deep.equal([]);
  });

  describe('PUT /ui/bgp-sessions/{sid}/link-latency', () => {
    let sid: number;
    beforeEach(async () => {
      sid = (await h.client.get('/admin/nodes/fra1/bgp-sessions')).body[0].id;
    });

    it('sets the one field, answers the session row, publishes a generation and rings the doorbell', async () => {
      const spec = (await h.client.get(`/admin/bgp-sessions/${sid}`)).body.spec;
      const res = await h.client.put(`/ui/bgp-sessions/${sid}/link-latency`, { link_latency: 9 });
      expectResponse(res).status(200);
      expect(res.body).to.deep.equal({ id: sid, name: 'peer_a', remote_asn: 4242420002, link_latency: 9 });
      expect((await h.client.get(`/admin/bgp-sessions/${sid}`)).body.spec).to.deep.equal({ ...spec, link_latency: 9 });
      expect((await generations())[0]).to.include({ generation: 3, reason: 'bgp session peer_a updated (link_latency)' });
      expect(published()).to.deep.equal(['fra1:1', 'fra1:2', 'fra1:3']);
      expect((await h.client.get('/admin/nodes/fra1/desired-state')).body.state.bgp_sessions[0].link_latency).to.equal(9);
      expect((await h.client.get('/ui/nodes/fra1/route-tuning')).body.sessions).to.deep.equal([res.body]);
    });

    it('null clears it; the same value again changes nothing', async () => {
      const cleared = await h.client.put(`/ui/bgp-sessions/${sid}/link-latency`, { link_latency: null });
      expectResponse(cleared).status(200).body({ link_latency: null });
      expect((await h.client.get('/admin/nodes/fra1/desired-state')).body.state.bgp_sessions[0].link_latency).to.equal(null);
      const events = await writeEvents();
      expectResponse(await h.client.put(`/ui/bgp-sessions/${sid}/link-latency`, { link_latency: null }))
        .status(200)
        .body({ link_latency: null });
      expect(await writeEvents()).to.equal(events);
      expect((await generations()).map((g) => g.generation)).to.deep.equal([3, 2, 1]);
      expect(published()).to.deep.equal(['fra1:1', 'fra1:2', 'fra1:3']);
    });

    it('refuses values outside 1..9, a missing field and other fields (422); an unknown session is 404', async () => {
      for (const body of [{ link_latency: 0 }, { link_latency: 10 }, { link_latency: 2.5 }, { link_latency: '3' }, {}, { link_latency: 3, bandwidth: 24 }]) {
        expectResponse(await h.client.put(`/ui/bgp-sessions/${sid}/link-latency`, body)).status(422);
      }
      expectResponse(await h.client.put('/ui/bgp-sessions/999999/link-latency', { link_latency: 3 }))
        .status(404)
        .detail('unknown bgp session 999999');
      expectResponse(await h.client.put('/ui/bgp-sessions/0/link-latency', { link_latency: 3 })).status(422);
      expect((await generations()).map((g) => g.generation)).to.deep.equal([2, 1]);
    });
  });

  describe('GET /ui/nodes/{id}/peer-defaults', () => {
    it('answers the key reference, the link-local address and every listen port in use, enabled or not', async () => {
      expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_off', 51820), enabled: false })).status(201);
      expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_low', 51800) })).status(201);
      expectResponse(await h.client.post('/admin/nodes/fra1/interfaces', { spec: wg('dn42_none', 51802, { listen_port: null }) })).status(201);
      const res = await h.client.get('/ui/nodes/fra1/peer-defaults');
      expectResponse(res).status(200);
      expect(res.body).to.deep.equal({
        node_id: 'fra1',
        wireguard: { private_key_ref: null, link_local: 'fe80::1', used_listen_ports: [51800, 51801, 51820] },
      });
    });

    it('answers null for what is unknown, and "node" once the agent registered its key', async () => {
      expectResponse(await h.client.post('/admin/nodes', node('bare', { link_local: undefined }))).status(201);
      expect((await h.client.get('/ui/nodes/bare/peer-defaults')).body).to.deep.equal({
        node_id: 'bare',
        wireguard: { private_key_ref: null, link_local: null, used_listen_ports: [] },
      });
      const { token } = await issueAgentToken(h.url, ADMIN_TOKEN, 'bare');
      const registered = await api(`${h.url}/control/v1`, { token }).post('/agent/wireguard-keys', {
        node_id: 'bare',
        public_key: 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=',
      });
      expectResponse(registered).status(200).body({ status: 'stored' });
      expect((await h.client.get('/ui/nodes/bare/peer-defaults')).body.wireguard.private_key_ref).to.equal('node');
      expectResponse(await h.client.get('/ui/nodes/ghost/peer-defaults'))
        .status(404)
        .detail('unknown node ghost');
    });
  });
});
