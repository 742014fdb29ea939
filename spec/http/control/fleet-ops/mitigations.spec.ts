import { expect } from 'chai';
import { expectResponse } from '../../../support/http.js';
import { recordHeartbeat } from '../../../../infra/telemetry/liveness.js';
import { auditEntries } from '../support.js';
import { startFleet, type FleetHarness } from '../fleet/support.js';
import { bgp, desiredState, eventCount, generationOf, node, publications, wg } from './support.js';

const PEER = 4242420002;

describe('control: flap mitigations', () => {
  let h: FleetHarness;
  const template = async (id: string) => (await h.client.get(`/admin/nodes/${id}`)).body.base_template;

  beforeEach(async () => {
    h = await startFleet();
    await h.client.post('/admin/nodes', node('fra1', { base_template: { bird: { cold_potato_med: 50 } } }));
    await h.client.post('/admin/nodes', node('ams1', { router_id: '172.20.0.2', loopback_ipv4: '172.20.0.2' }));
    await h.client.post('/admin/nodes', node('ber1', { router_id: '172.20.0.3', loopback_ipv4: '172.20.0.3' }));
    for (const id of ['fra1', 'ams1', 'ber1']) {
      const res = await h.client.post(`/admin/nodes/${id}/peerings/provision`, {
        peering: { name: 'dn42_peer', remote_asn: PEER },
        interface_spec: wg('dn42_peer', 51801),
        bgp_specs: [bgp('dn42_peer', PEER)],
      });
      expectResponse(res).status(201);
    }
    h.sys.broadcaster.calls.length = 0;
  });
  afterEach(() => h.close());

  describe('prefix-block and prefix-unblock', () => {
    it('blocks the canonical prefix on every non-decommissioned node in one append, and a second block changes nothing', async () => {
      await h.client.post('/admin/nodes/ber1/decommission');
      const generations = { ams1: await generationOf(h.client, 'ams1'), fra1: await generationOf(h.client, 'fra1') };
      h.sys.broadcaster.calls.length = 0;
      const res = await h.client.post('/admin/fleet/mitigations/prefix-block', { prefix: '172.20.1.7/24' });
      expectResponse(res).status(200);
      expect(res.body).to.deep.equal({
        prefix: '172.20.1.0/24',
        nodes: ['ams1', 'fra1'],
        changed: { ams1: generations.ams1 + 1, fra1: generations.fra1 + 1 },
        deferred: [],
      });
      expect(await publications(h.sys, 'fleet: prefix block 172.20.1.0/24')).to.deep.equal({ appends: 1, generations: 2 });
      expect(h.sys.broadcaster.published.map((c) => c.node_id)).to.deep.equal(['ams1', 'fra1']);
      expect((await desiredState(h.client, 'fra1')).bird.blocked_prefixes).to.deep.equal(['172.20.1.0/24']);
      expect(await template('ber1')).to.deep.equal({});

      const before = await eventCount(h.sys);
      const again = await h.client.post('/admin/fleet/mitigations/prefix-block', { prefix: '172.20.1.0/24' });
      expect(again.body).to.deep.equal({ prefix: '172.20.1.0/24', nodes: ['ams1', 'fra1'], changed: {}, deferred: [] });
      expect(await eventCount(h.sys)).to.equal(before);
    });

    it("block then unblock returns each node's base_template and document to what they were", async () => {
      const before = { fra1: await template('fra1'), ams1: await template('ams1'), fraState: await desiredState(h.client, 'fra1') };
      expectResponse(await h.client.post('/admin/fleet/mitigations/prefix-block', { prefix: 'fd42:4242:2::/48', nodes: ['fra1', 'ams1'] })).status(200);
      expect(await template('fra1')).to.deep.equal({ bird: { cold_potato_med: 50, blocked_prefixes: ['fd42:4242:2::/48'] } });
      const res = await h.client.post('/admin/fleet/mitigations/prefix-unblock', { prefix: 'FD42:4242:2:0::/48', nodes: ['fra1', 'ams1'] });
      expectResponse(res).status(200);
      expect(res.body).to.deep.include({ prefix: 'fd42:4242:2::/48', nodes: [] });
      expect(Object.keys(res.body.changed)).to.deep.equal(['ams1', 'fra1']);
      expect(await template('fra1')).to.deep.equal(before.fra1);
      expect(await template('ams1')).to.deep.equal(before.ams1);
      expect((await desiredState(h.client, 'fra1')).bird).to.deep.equal(before.fraState.bird);
      const again = await h.client.post('/admin/fleet/mitigations/prefix-unblock', { prefix: 'fd42:4242:2::/48' });
      expect(again.body.changed).to.deep.equal({});
    });

    it('blocks only the named nodes; unblock without nodes clears every node, a decommissioned one too (which keeps its generation)', async () => {
      expect(
        (await h.client.post('/admin/fleet/mitigations/prefix-block', { prefix: '172.20.9.0/24', nodes: ['ber1', 'fra1', 'ber1'] })).body.nodes,
      ).to.deep.equal(['ber1', 'fra1']);
      expect((await desiredState(h.client, 'ams1')).bird.blocked_prefixes).to.deep.equal([]);
      await h.client.post('/admin/nodes/ber1/decommission');
      const berGeneration = await generationOf(h.client, 'ber1');
      const res = await h.client.post('/admin/fleet/mitigations/prefix-unblock', { prefix: '172.20.9.0/24' });
      expect(res.body).to.deep.include({ nodes: [] });
      expect(res.body.changed.ber1).to.equal(berGeneration);
      expect(res.body.changed.fra1).to.equal(await generationOf(h.client, 'fra1'));
      expect(await template('ber1')).to.deep.equal({});
    });

    it('answers 422 invalid prefix, 404 unknown node and 409 decommissioned node, and writes nothing', async () => {
      await h.client.post('/admin/nodes/ber1/decommission');
      const before = await eventCount(h.sys);
      for (const path of ['prefix-block', 'prefix-unblock']) {
        const bad = await h.client.post(`/admin/fleet/mitigations/${path}`, { prefix: '172.20.1.0/33' });
        expectResponse(bad).status(422);
        expect(bad.body.detail.message).to.equal('invalid prefix: 172.20.1.0/33');
        expectResponse(await h.client.post(`/admin/fleet/mitigations/${path}`, { prefix: 'nonsense' }))
          .status(422)
          .detail('invalid prefix: nonsense');
        expectResponse(await h.client.post(`/admin/fleet/mitigations/${path}`, { prefix: '' }))
          .status(422)
          .detail('invalid prefix: ');
        expectResponse(await h.client.post(`/admin/fleet/mitigations/${path}`, { prefix: '172.20.1.0/24', nodes: ['fra1', 'ghost'] }))
          .status(404)
          .detail('unknown node ghost');
        expectResponse(await h.client.post(`/admin/fleet/mitigations/${path}`, { prefix: '172.20.1.0/24', nodes: ['fra1', 'ber1'] }))
          .status(409)
          .detail('node ber1 is decommissioned');
        expectResponse(await h.client.post(`/admin/fleet/mitigations/${path}`, { nodes: ['fra1'] })).status(422);
      }
      expect(await eventCount(h.sys)).to.equal(before);
      expect(await template('fra1')).to.deep.equal({ bird: { cold_potato_med: 50 } });
    });

    it('is audited like every admin write', async () => {
      await h.client.post('/admin/fleet/mitigations/prefix-block', { prefix: '172.20.1.0/24', nodes: ['fra1'] });
      await h.client.post('/admin/fleet/mitigations/prefix-block', { prefix: 'bad' });
      const entries = (await auditEntries(h.sys)).filter((e) => e.path.startsWith('/control/v1/admin/fleet/'));
      expect(entries.map((e) => [e.actor, e.method, e.path, e.status_code]).sort()).to.deep.equal([
        ['admin', 'POST', '/control/v1/admin/fleet/mitigations/prefix-block', 200],
        ['admin', 'POST', '/control/v1/admin/fleet/mitigations/prefix-block', 422],
      ]);
    });
  });

  describe('blocked_prefixes and agent versions', () => {
    it('keeps the block out of the document of a node whose agent reports a version below 1.0.187, and says so', async () => {
      await recordHeartbeat(h.sys.pool, 'ams1', { agent_version: '1.0.150', applied_generation: 1, apply_status: 'succeeded' }, h.sys.clock.now());
      await recordHeartbeat(h.sys.pool, 'fra1', { agent_version: '1.0.187', applied_generation: 1, apply_status: 'succeeded' }, h.sys.clock.now());
      const res = await h.client.post('/admin/fleet/mitigations/prefix-block', { prefix: '172.20.1.0/24' });
      expect(res.body).to.deep.include({ nodes: ['ams1', 'ber1', 'fra1'], deferred: [{ node_id: 'ams1', agent_version: '1.0.150' }] });
      expect(Object.keys(res.body.changed)).to.deep.equal(['ams1', 'ber1', 'fra1']);
      expect((await desiredState(h.client, 'ams1')).bird.blocked_prefixes).to.deep.equal([]);
      expect((await desiredState(h.client, 'fra1')).bird.blocked_prefixes).to.deep.equal(['172.20.1.0/24']);
      expect((await desiredState(h.client, 'ber1')).bird.blocked_prefixes, 'no version reported').to.deep.equal(['172.20.1.0/24']);
      expect(await template('ams1')).to.deep.equal({ bird: { blocked_prefixes: ['172.20.1.0/24'] } });
      const list = await h.client.get('/admin/fleet/mitigations');
      expect(list.body.blocked_prefixes).to.deep.equal([
        { prefix: '172.20.1.0/24', nodes: ['ams1', 'ber1', 'fra1'], deferred: [{ node_id: 'ams1', agent_version: '1.0.150' }] },
      ]);
    });
  });

  describe('peer-disable and peer-enable', () => {
    it('disables every eBGP session of the AS (protocol gone, tunnel kept) and enable restores them; second runs change nothing', async () => {
      const before = await desiredState(h.client, 'fra1');
      const res = await h.client.post('/admin/fleet/mitigations/peer-disable', { asn: PEER });
      expectResponse(res).status(200);
      expect(res.body.asn).to.equal(PEER);
      expect(res.body.sessions.map((s: any) => [s.node_id, s.name, s.remote_asn, s.enabled])).to.deep.equal([
        ['ams1', 'dn42_peer', PEER, false],
        ['ber1', 'dn42_peer', PEER, false],
        ['fra1', 'dn42_peer', PEER, false],
      ]);
      expect(Object.keys(res.body.changed)).to.deep.equal(['ams1', 'ber1', 'fra1']);
      expect(await publications(h.sys, `fleet: peer disable AS${PEER}`)).to.deep.equal({ appends: 1, generations: 3 });
      const off = await desiredState(h.client, 'fra1');
      expect(off.bgp_sessions).to.deep.equal([]);
      expect(off.interfaces.map((i: any) => i.name)).to.deep.equal(['dn42_peer']);
      expect((await h.client.post('/admin/fleet/mitigations/peer-disable', { asn: PEER })).body.changed).to.deep.equal({});

      const on = await h.client.post('/admin/fleet/mitigations/peer-enable', { asn: PEER });
      expectResponse(on).status(200);
      expect(on.body.sessions.every((s: any) => s.enabled)).to.equal(true);
      expect(Object.keys(on.body.changed)).to.deep.equal(['ams1', 'ber1', 'fra1']);
      expect((await desiredState(h.client, 'fra1')).bgp_sessions).to.deep.equal(before.bgp_sessions);
      expect((await h.client.post('/admin/fleet/mitigations/peer-enable', { asn: PEER })).body.changed).to.deep.equal({});
    });

    it('leaves a session an operator disabled by hand disabled on enable, and lists disabled sessions with their cause', async () => {
      const ams = (await h.client.get('/admin/nodes/ams1/bgp-sessions')).body[0];
      expectResponse(await h.client.patch(`/admin/bgp-sessions/${ams.id}`, { spec: { ...ams.spec, enabled: false } })).status(200);
      await h.client.post('/admin/fleet/mitigations/peer-disable', { asn: PEER });
      const listed = await h.client.get('/admin/fleet/mitigations');
      expect(listed.body.disabled_sessions.map((s: any) => [s.node_id, s.enabled, s.by_mitigation])).to.deep.equal([
        ['ams1', false, false],
        ['ber1', false, true],
        ['fra1', false, true],
      ]);
      const on = await h.client.post('/admin/fleet/mitigations/peer-enable', { asn: PEER });
      expect(on.body.sessions.map((s: any) => [s.node_id, s.enabled])).to.deep.equal([
        ['ams1', false],
        ['ber1', true],
        ['fra1', true],
      ]);
      expect(Object.keys(on.body.changed)).to.deep.equal(['ber1', 'fra1']);
      expect((await h.client.get('/admin/fleet/mitigations')).body).to.deep.equal({
        blocked_prefixes: [],
        disabled_sessions: [{ id: ams.id, node_id: 'ams1', name: 'dn42_peer', remote_asn: PEER, enabled: false, by_mitigation: false }],
      });
    });

    it('answers 404 for an AS without eBGP sessions and 422 for a bad asn', async () => {
      for (const path of ['peer-disable', 'peer-enable']) {
        expectResponse(await h.client.post(`/admin/fleet/mitigations/${path}`, { asn: 4242429999 }))
          .status(404)
          .detail('no bgp sessions with remote_asn 4242429999');
        expectResponse(await h.client.post(`/admin/fleet/mitigations/${path}`, { asn: 0 })).status(422);
        expectResponse(await h.client.post(`/admin/fleet/mitigations/${path}`, { asn: 'x' })).status(422);
      }
    });
  });
});
