import { expect } from 'chai';
import { registerWireguardKey } from '../../../../commands/wireguard-keys.js';
import { fleetDeps } from '../../../../http/control/fleet/common.js';
import { expectResponse } from '../../../support/http.js';
import { startFleet, type FleetHarness } from '../fleet/support.js';
import { bgp, desiredState, eventCount, generationOf, key, legacyInternalLink, node, publications, wg } from './support.js';

describe('control: fleet operations', () => {
  let h: FleetHarness;
  beforeEach(async () => {
    h = await startFleet();
    await h.client.post('/admin/nodes', node('fra1'));
    await h.client.post('/admin/nodes', node('ams1', { router_id: '172.20.0.2', loopback_ipv4: '172.20.0.2', link_local: 'fe80::3' }));
    const provision = await h.client.post('/admin/nodes/fra1/peerings/provision', {
      peering: { name: 'alice', remote_asn: 4242420002 },
      interface_spec: wg('wg-alice', 51801),
      bgp_spec: bgp('alice_v6', 4242420002, { neighbor_address: 'fe80::2%wg-alice', interface: null }),
    });
    expectResponse(provision).status(201);
    await legacyInternalLink(h.client, 'fra1', 'ams1', [51805, 51806]);
    h.sys.broadcaster.calls.length = 0;
  });
  afterEach(() => h.close());

  describe('POST /admin/fleet/normalize-peer-names', () => {
    it('is a dry run by default: reports the renames and writes nothing', async () => {
      const before = await eventCount(h.sys);
      const res = await h.client.post('/admin/fleet/normalize-peer-names');
      expectResponse(res)
        .status(200)
        .body({ dry_run: true, changed_nodes: ['ams1', 'fra1'], generations: {} });
      expect(res.body.details.changes).to.deep.include({
        node_id: 'fra1',
        kind: 'interface',
        id: res.body.details.changes.find((c: any) => c.name === 'wg-alice').id,
        name: 'wg-alice',
        field: 'name',
        from: 'wg-alice',
        to: 'dn42_4242420002',
      });
      expect(await eventCount(h.sys)).to.equal(before);
      expect(h.sys.broadcaster.calls).to.deep.equal([]);
      expect((await h.client.get('/admin/nodes/fra1/interfaces')).body.map((i: any) => i.name)).to.deep.equal(['wg-alice', 'to-ams1']);
    });

    it('renames every node in one append, publishes and rings each, and a second run changes nothing', async () => {
      const generations = { ams1: await generationOf(h.client, 'ams1'), fra1: await generationOf(h.client, 'fra1') };
      const res = await h.client.post('/admin/fleet/normalize-peer-names', { dry_run: false });
      expectResponse(res)
        .status(200)
        .body({ dry_run: false, changed_nodes: ['ams1', 'fra1'], generations: { ams1: generations.ams1 + 1, fra1: generations.fra1 + 1 } });
      expect(await publications(h.sys, 'fleet: normalize peer names')).to.deep.equal({ appends: 1, generations: 2 });
      expect(h.sys.broadcaster.published.map((c) => [c.node_id, c.generation])).to.deep.equal([
        ['ams1', generations.ams1 + 1],
        ['fra1', generations.fra1 + 1],
      ]);

      expect((await h.client.get('/admin/nodes/fra1/peerings')).body.map((p: any) => [p.name, p.remote_label])).to.deep.equal([
        ['dn42_4242420002', 'alice'],
        ['int_ams1', 'link-ams1'],
      ]);
      const state = await desiredState(h.client, 'fra1');
      expect(state.interfaces.map((i: any) => i.name)).to.deep.equal(['dn42_4242420002', 'int_ams1']);
      expect(state.bgp_sessions[0]).to.deep.include({ name: 'dn42_4242420002', interface: 'dn42_4242420002' });
      expect(state.bird.internal_topology.adjacencies.map((a: any) => a.interface)).to.deep.equal(['int_ams1']);

      const before = await eventCount(h.sys);
      const again = await h.client.post('/admin/fleet/normalize-peer-names', { dry_run: false });
      expectResponse(again).status(200).body({ dry_run: false, changed_nodes: [], generations: {} });
      expect(again.body.details.changes).to.deep.equal([]);
      expect(await eventCount(h.sys)).to.equal(before);
    });

    it('refuses a body that is not {dry_run: boolean}', async () => {
      expectResponse(await h.client.post('/admin/fleet/normalize-peer-names', { dry_run: 'no' })).status(422);
      expectResponse(await h.client.post('/admin/fleet/normalize-peer-names', { other: 1 })).status(422);
    });
  });

  describe('POST /admin/fleet/migrate-keys', () => {
    it("makes internal links follow the remote's registered key, keeps a pin towards a node without one, and a second run changes nothing", async () => {
      await registerWireguardKey(fleetDeps(h.sys.context), 'ams1', key('N'), null, { actor: 'spec' });
      expect((await desiredState(h.client, 'fra1')).interfaces[1].peer.public_key, 'the pin wins before').to.equal(key('O'));

      const dry = await h.client.post('/admin/fleet/migrate-keys', {});
      expectResponse(dry)
        .status(200)
        .body({ dry_run: true, changed_nodes: ['fra1'], generations: {} });
      const generation = await generationOf(h.client, 'fra1');
      const res = await h.client.post('/admin/fleet/migrate-keys', { dry_run: false });
      expectResponse(res)
        .status(200)
        .body({ dry_run: false, changed_nodes: ['fra1'], generations: { fra1: generation + 1 } });
      expect(res.body.details.changes.map((c: any) => [c.node_id, c.name, c.field, c.from, c.to])).to.deep.equal([
        ['fra1', 'to-ams1', 'spec.peer.public_key', key('O'), null],
      ]);
      expect(res.body.details.skipped.map((s: any) => [s.node_id, s.reason])).to.deep.equal([
        ['ams1', 'remote node fra1 has registered no key yet; the pinned key stays'],
      ]);

      const fra = await desiredState(h.client, 'fra1');
      expect(fra.interfaces[1].peer).to.deep.include({ public_key: key('N'), endpoint: 'ams1.example.net:51806' });
      expect(fra.interfaces.every((i: any) => i.private_key_ref === 'node')).to.equal(true);
      expect((await desiredState(h.client, 'ams1')).interfaces[0].peer.public_key).to.equal(key('P'));

      const again = await h.client.post('/admin/fleet/migrate-keys', { dry_run: false });
      expectResponse(again).status(200).body({ changed_nodes: [], generations: {} });
    });

    it('lists registered keys without escrow when a recovery key is configured', async () => {
      await h.close();
      const { publicKey } = await import('node:crypto').then((c) => c.generateKeyPairSync('ed25519'));
      h = await startFleet({ RECOVERY_PUBLIC_KEY: publicKey.export({ type: 'spki', format: 'pem' }).toString() });
      await h.client.post('/admin/nodes', node('fra1'));
      await registerWireguardKey(fleetDeps(h.sys.context), 'fra1', key('F'), null, { actor: 'spec' });
      const res = await h.client.post('/admin/fleet/migrate-keys', {});
      expectResponse(res).status(200).body({ changed_nodes: [] });
      expect(res.body.details.skipped).to.deep.equal([
        { node_id: 'fra1', kind: 'node', id: null, name: 'fra1', reason: 'registered key has no escrow; the agent adds it with its next key report' },
      ]);
    });
  });

  describe('POST /admin/fleet/migrate-internal-ports', () => {
    it('moves both ends of an internal link into the internal pool and re-points their endpoints in one append', async () => {
      const dry = await h.client.post('/admin/fleet/migrate-internal-ports', { dry_run: true });
      expectResponse(dry)
        .status(200)
        .body({ dry_run: true, changed_nodes: ['ams1', 'fra1'], generations: {} });
      expect((await h.client.get('/admin/nodes/fra1/interfaces')).body[1].spec.listen_port).to.equal(51805);

      const res = await h.client.post('/admin/fleet/migrate-internal-ports', { dry_run: false });
      expectResponse(res)
        .status(200)
        .body({ dry_run: false, changed_nodes: ['ams1', 'fra1'] });
      expect(Object.keys(res.body.generations)).to.deep.equal(['ams1', 'fra1']);
      expect(await publications(h.sys, 'fleet: migrate internal ports')).to.deep.equal({ appends: 1, generations: 2 });
      expect(res.body.details.changes.map((c: any) => [c.node_id, c.field, c.from, c.to])).to.deep.equal([
        ['ams1', 'spec.listen_port', 51806, 52800],
        ['ams1', 'spec.peer.endpoint', 'fra1.example.net:51805', 'fra1.example.net:52800'],
        ['fra1', 'spec.listen_port', 51805, 52800],
        ['fra1', 'spec.peer.endpoint', 'ams1.example.net:51806', 'ams1.example.net:52800'],
      ]);
      const fra = await desiredState(h.client, 'fra1');
      expect(fra.interfaces.map((i: any) => [i.name, i.listen_port])).to.deep.equal([
        ['wg-alice', 51801],
        ['to-ams1', 52800],
      ]);
      expect(fra.interfaces[1].peer.endpoint).to.equal('ams1.example.net:52800');

      const again = await h.client.post('/admin/fleet/migrate-internal-ports', { dry_run: false });
      expectResponse(again).status(200).body({ changed_nodes: [], generations: {} });
    });

    it('migrates a decommissioned node without publishing it: its generation stays', async () => {
      expectResponse(await h.client.post('/admin/nodes/ams1/decommission')).status(200);
      const generation = await generationOf(h.client, 'ams1');
      h.sys.broadcaster.calls.length = 0;
      const res = await h.client.post('/admin/fleet/migrate-internal-ports', { dry_run: false });
      expectResponse(res)
        .status(200)
        .body({ changed_nodes: ['ams1', 'fra1'] });
      expect(res.body.generations.ams1).to.equal(generation);
      expect(h.sys.broadcaster.published.map((c) => c.node_id)).to.deep.equal(['fra1']);
      expect((await h.client.get('/admin/nodes/ams1/interfaces')).body[0].spec.listen_port).to.equal(52800);
    });
  });
});
