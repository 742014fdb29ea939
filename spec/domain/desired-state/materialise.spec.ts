import { expect } from 'chai';
import { Validation } from '../../../domain/errors.js';
import { emptyDesiredState, materialise, referencedNodeIds } from '../../../domain/desired-state/materialise.js';
import { DEFAULT_OSPF_COST, MATERIALIZATION_FAILED, validateDesiredState } from '../../../domain/desired-state/schema.js';
import { context, facts, iface, key, liveNode, peering, session } from './fixtures.js';

const valid = (doc: unknown) => expect(validateDesiredState(doc)).to.deep.equal({ ok: true });

describe('materialise', () => {
  it('carries the node identity, with the region taken from labels.region', () => {
    const doc = materialise(liveNode({ labels: { region: 44 } }), context());
    expect(doc.node).to.deep.equal({
      node_id: 'fra1',
      asn: 4242420001,
      router_id: '172.20.0.1',
      site: 'fra',
      region: 44,
      loopback_ipv4: '172.20.0.1',
      loopback_ipv6: 'fd00:1::1',
      link_local: 'fe80::1',
      ipv4_prefixes: ['172.20.0.0/27'],
      ipv6_prefixes: ['fd00:1::/48'],
    });
    expect(doc.dns).to.equal(null);
    expect(doc.schema_version).to.equal(1);
    valid(doc);
  });

  it('ignores a region label that is not a dn42 region', () => {
    expect(materialise(liveNode({ labels: { region: 'eu-west' } }), context()).node.region).to.equal(null);
    expect(materialise(liveNode({ labels: { region: '52' } }), context()).node.region).to.equal(52);
  });

  it('gives a decommissioned node the empty desired state: identity kept, nothing to run', () => {
    const node = liveNode(
      { base_template: { bird: { blocked_prefixes: ['172.20.0.0/24'], internal_topology: { routers: ['ber1'] } } } },
      { lifecycle: 'decommissioned', peerings: [peering(1)], interfaces: [iface(1, {}, { peering_id: 1 })], sessions: [session(1, {}, { peering_id: 1 })] },
    );
    const doc = materialise(node, context([facts('ber1')]));
    expect(doc).to.deep.equal(emptyDesiredState(node));
    expect(doc.interfaces).to.deep.equal([]);
    expect(doc.bgp_sessions).to.deep.equal([]);
    expect(doc.bird.internal_topology).to.deep.equal({ routers: [], hosts: [], adjacencies: [] });
    expect(doc.bird.blocked_prefixes).to.deep.equal([]);
    expect(doc.node.node_id).to.equal('fra1');
    valid(doc);
  });

  it('leaves out disabled interfaces and sessions, and everything of a disabled peering', () => {
    const node = liveNode(
      {},
      {
        peerings: [peering(1), peering(2, { enabled: false })],
        interfaces: [iface(1, {}, { peering_id: 1 }), iface(2, {}, { enabled: false }), iface(3, {}, { peering_id: 2 })],
        sessions: [session(1, {}, { peering_id: 1 }), session(2, { enabled: false }), session(3, {}, { peering_id: 2 })],
      },
    );
    const doc = materialise(node, context());
    expect(doc.interfaces.map((i) => i.name)).to.deep.equal(['wg1']);
    expect(doc.bgp_sessions.map((s) => s.name)).to.deep.equal(['s1']);
    valid(doc);
  });

  it('orders interfaces and sessions by sort_order, then id', () => {
    const node = liveNode(
      {},
      {
        interfaces: [iface(3, {}, { sort_order: 1 }), iface(1, {}, { sort_order: 5 }), iface(2, {}, { sort_order: 1 })],
        sessions: [session(3, {}, { sort_order: 0 }), session(1, {}, { sort_order: 2 }), session(2, {}, { sort_order: 0 })],
      },
    );
    const doc = materialise(node, context());
    expect(doc.interfaces.map((i) => i.name)).to.deep.equal(['wg2', 'wg3', 'wg1']);
    expect(doc.bgp_sessions.map((s) => s.name)).to.deep.equal(['s2', 's3', 's1']);
  });

  describe('eBGP links', () => {
    it("give an interface without addresses the node's link-local /64 and the peer route from peer_link_local", () => {
      const doc = materialise(liveNode({}, { interfaces: [iface(1, { listen_port: 51801, peer_link_local: 'fe80::2' })] }), context());
      expect(doc.interfaces[0]).to.deep.include({
        scope: 'external',
        mtu: 1420,
        addresses: [{ address: 'fe80::1/64', peer: 'fe80::2/128' }],
        listen_port: 51801,
        private_key_ref: 'node',
        peer: { public_key: null, preshared_key_ref: null, endpoint: null, allowed_ips: ['0.0.0.0/0', '::/0'], persistent_keepalive_seconds: null },
      });
      valid(doc);
    });

    it('keep the addresses the spec gives, including the "a peer b" form', () => {
      const doc = materialise(
        liveNode({}, { interfaces: [iface(1, { addresses: ['172.20.0.1/32 peer 172.20.9.1/32', 'fe80::99/64'], peer_link_local: 'fe80::2' })] }),
        context(),
      );
      expect(doc.interfaces[0].addresses).to.deep.equal([
        { address: '172.20.0.1/32', peer: '172.20.9.1/32' },
        { address: 'fe80::99/64', peer: 'fe80::2/128' },
      ]);
      valid(doc);
    });

    it('have no addresses when neither the spec nor the node gives one', () => {
      const doc = materialise(liveNode({ link_local: null }, { interfaces: [iface(1)] }), context());
      expect(doc.interfaces[0].addresses).to.deep.equal([]);
    });

    it('refuse a peer_link_local without a link-local address to attach it to', () => {
      const node = liveNode({ link_local: null }, { interfaces: [iface(1, { peer_link_local: 'fe80::2' })] });
      expect(() => materialise(node, context()))
        .to.throw(Validation, MATERIALIZATION_FAILED)
        .with.property('errors')
        .that.deep.equals([
          {
            loc: ['state', 'interfaces', 0, 'addresses'],
            msg: 'peer_link_local needs a link-local address on the interface (spec addresses or node link_local)',
            type: 'peer_link_local',
          },
        ]);
    });

    it('fill in the WireGuard peer from the spec with defaults', () => {
      const doc = materialise(liveNode({}, { interfaces: [iface(1, { peer: { public_key: key('B'), endpoint: 'peer.example:51820' } })] }), context());
      expect(doc.interfaces[0].peer).to.deep.equal({
        public_key: key('B'),
        preshared_key_ref: null,
        endpoint: 'peer.example:51820',
        allowed_ips: ['0.0.0.0/0', '::/0'],
        persistent_keepalive_seconds: null,
      });
    });
  });

  describe('BGP sessions', () => {
    it('run a link-local neighbour as MP-BGP with extended next hop and dn42 defaults', () => {
      const doc = materialise(liveNode({}, { interfaces: [iface(1)], sessions: [session(1, { link_latency: 3, crypto: 33 })] }), context());
      expect(doc.bgp_sessions[0]).to.deep.equal({
        name: 's1',
        remote_asn: 4242420001,
        neighbor: 'fe80::2',
        interface: 'wg1',
        source_address: null,
        address_family: 'mp-bgp',
        extended_next_hop: true,
        policy: 'peer',
        link_latency: 3,
        bandwidth: null,
        crypto: 33,
        import_limit: 8500,
        import_limit_action: 'block',
        local_pref: null,
        bfd: false,
      });
      valid(doc);
    });

    it('take the interface from a %zone in neighbor_address, or from the one interface of the peering', () => {
      const node = liveNode(
        {},
        {
          peerings: [peering(1)],
          interfaces: [iface(1, {}, { peering_id: 1 })],
          sessions: [
            session(1, { neighbor_address: 'fe80::2%wg1', interface: null }),
            session(2, { neighbor_address: 'fe80::3', interface: null }, { peering_id: 1 }),
          ],
        },
      );
      expect(materialise(node, context()).bgp_sessions.map((s) => [s.neighbor, s.interface])).to.deep.equal([
        ['fe80::2', 'wg1'],
        ['fe80::3', 'wg1'],
      ]);
    });

    it('refuse a %zone that names another interface than the spec', () => {
      const node = liveNode({}, { sessions: [session(1, { neighbor_address: 'fe80::2%wg9', interface: 'wg1' })] });
      expect(() => materialise(node, context())).to.throw(Validation, MATERIALIZATION_FAILED);
    });

    it('give a link-local neighbour without an interface a document that fails validation at that session', () => {
      const doc = materialise(liveNode({}, { sessions: [session(1, { interface: null })] }), context());
      expect(validateDesiredState(doc)).to.deep.equal({
        ok: false,
        errors: [{ loc: ['state', 'bgp_sessions', 0, 'interface'], msg: 'a link-local neighbor needs an interface', type: 'required' }],
      });
    });

    it('use one channel for global neighbours and the template import limit', () => {
      const node = liveNode(
        { base_template: { bird: { import_limit: 12000 } } },
        {
          sessions: [
            session(1, { neighbor_address: '172.20.9.1', interface: null }),
            session(2, { neighbor_address: 'fd00:9::1', interface: null, import_limit: 100 }),
          ],
        },
      );
      const doc = materialise(node, context());
      expect(doc.bgp_sessions.map((s) => [s.address_family, s.extended_next_hop, s.import_limit])).to.deep.equal([
        ['ipv4', false, 12000],
        ['ipv6', false, 100],
      ]);
      valid(doc);
    });
  });

  describe('internal peerings', () => {
    const internalNode = (spec = {}) =>
      liveNode(
        {},
        {
          peerings: [peering(1, { is_internal: true, remote_node_id: 'ber1', remote_asn: 4242420001 })],
          interfaces: [iface(1, { listen_port: 52801, addresses: ['fe80::1:1/64'], ...spec }, { peering_id: 1 })],
        },
      );

    it("take the peer's public key from the remote node when the spec sets none", () => {
      const doc = materialise(internalNode(), context([facts('ber1', { wireguard_public_key: key('C') })]));
      expect(doc.interfaces[0].scope).to.equal('internal');
      expect(doc.interfaces[0].peer?.public_key).to.equal(key('C'));
      valid(doc);
    });

    it('keep a key the spec sets, and a null key while the remote has reported none', () => {
      expect(
        materialise(internalNode({ peer: { public_key: key('D') } }), context([facts('ber1', { wireguard_public_key: key('C') })])).interfaces[0].peer
          ?.public_key,
      ).to.equal(key('D'));
      const pending = materialise(internalNode(), context([facts('ber1')]));
      expect(pending.interfaces[0].peer?.public_key).to.equal(null);
      valid(pending);
    });

    it('do not derive addresses from the eBGP link-local address', () => {
      const doc = materialise(internalNode({ addresses: [] }), context([facts('ber1')]));
      expect(doc.interfaces[0].addresses).to.deep.equal([]);
    });

    it('become IGP adjacencies with the spec cost or the default', () => {
      expect(materialise(internalNode({ cost: 20 }), context([facts('ber1')])).bird.internal_topology.adjacencies).to.deep.equal([
        { interface: 'wg1', node_id: 'ber1', cost: 20 },
      ]);
      expect(materialise(internalNode(), context([facts('ber1')])).bird.internal_topology.adjacencies).to.deep.equal([
        { interface: 'wg1', node_id: 'ber1', cost: DEFAULT_OSPF_COST },
      ]);
    });
  });

  describe('internal topology', () => {
    const node = liveNode(
      {
        base_template: {
          bird: {
            internal_topology: { routers: ['zrh1', 'fra1', 'gone1', 'old1'], hosts: [{ name: 'web', addresses: ['172.20.0.20/32'], interface: 'eth1' }] },
          },
        },
      },
      { peerings: [peering(1, { is_internal: true, remote_node_id: 'ber1' }), peering(2, { is_internal: true, remote_node_id: 'off1', enabled: false })] },
    );
    const ctx = context(
      [
        facts('zrh1', { loopback_ipv4: '172.20.0.3', loopback_ipv6: 'fd00:3::1' }),
        facts('ber1'),
        facts('ams1'),
        facts('old1', { lifecycle: 'decommissioned' }),
        facts('off1'),
        facts('lon1'),
      ],
      {
        inbound: [
          { node_id: 'ams1', peering_id: 7, name: 'to-fra1', enabled: true },
          { node_id: 'lon1', peering_id: 8, name: 'to-fra1', enabled: false },
        ],
      },
    );

    it('joins template routers, own internal peerings and inbound ones, sorted, without self, decommissioned, disabled or unknown nodes', () => {
      const topology = materialise(node, ctx).bird.internal_topology;
      expect(topology.routers.map((r) => r.node_id)).to.deep.equal(['ams1', 'ber1', 'zrh1']);
      expect(topology.routers[2]).to.deep.equal({
        node_id: 'zrh1',
        asn: 4242420001,
        router_id: '172.20.0.4',
        loopback_ipv4: '172.20.0.3',
        loopback_ipv6: 'fd00:3::1',
      });
      expect(topology.hosts).to.deep.equal([{ name: 'web', addresses: ['172.20.0.20/32'], interface: 'eth1' }]);
      valid(materialise(node, ctx));
    });

    it('tells which node facts to load', () => {
      expect(referencedNodeIds(node)).to.deep.equal(['ber1', 'gone1', 'old1', 'zrh1']);
    });

    it('refuses a template of the wrong shape with its location', () => {
      const bad = liveNode({ base_template: { bird: { internal_topology: { routers: 'zrh1', extra: true } } } });
      expect(() => materialise(bad, context()))
        .to.throw(Validation, MATERIALIZATION_FAILED)
        .with.property('errors')
        .that.deep.equals([
          { loc: ['node', 'base_template', 'bird', 'internal_topology', 'extra'], msg: 'unknown field', type: 'additionalProperties' },
          { loc: ['node', 'base_template', 'bird', 'internal_topology', 'routers'], msg: 'must be array', type: 'type' },
        ]);
    });
  });

  it('reads route tuning and blocked prefixes from the template, blocked prefixes canonical, sorted and unique', () => {
    const doc = materialise(
      liveNode({
        base_template: {
          bird: {
            cold_potato_med: 50,
            route_local_pref: [{ prefix: '172.20.0.0/14', local_pref: 200 }],
            blocked_prefixes: ['fd00:AB::/48', '172.23.1.9/24', '172.23.1.0/24'],
          },
        },
      }),
      context(),
    );
    expect(doc.bird.cold_potato_med).to.equal(50);
    expect(doc.bird.route_local_pref).to.deep.equal([{ prefix: '172.20.0.0/14', local_pref: 200 }]);
    expect(doc.bird.blocked_prefixes).to.deep.equal(['172.23.1.0/24', 'fd00:ab::/48']);
    expect(doc.bird.import_prefixes.ipv6).to.deep.equal(['fd00::/8{44,64}']);
    valid(doc);
  });

  it('defaults to no blocked prefixes and no cold-potato MED', () => {
    const doc = materialise(liveNode(), context());
    expect(doc.bird.blocked_prefixes).to.deep.equal([]);
    expect(doc.bird.cold_potato_med).to.equal(null);
  });

  it('is deterministic: the same input gives byte-identical JSON, whatever the order of records and context', () => {
    const records = {
      peerings: [peering(2, { is_internal: true, remote_node_id: 'ber1' }), peering(1)],
      interfaces: [iface(2, {}, { peering_id: 2 }), iface(1, { peer_link_local: 'fe80::2' }, { peering_id: 1 })],
      sessions: [session(2, {}, { peering_id: 2 }), session(1, {}, { peering_id: 1 })],
    };
    const a = materialise(
      liveNode({}, records),
      context([facts('ber1'), facts('ams1')], { inbound: [{ node_id: 'ams1', peering_id: 3, name: 'x', enabled: true }] }),
    );
    const reversed = { peerings: [...records.peerings].reverse(), interfaces: [...records.interfaces].reverse(), sessions: [...records.sessions].reverse() };
    const b = materialise(
      liveNode({}, reversed),
      context([facts('ams1'), facts('ber1')], { inbound: [{ node_id: 'ams1', peering_id: 3, name: 'x', enabled: true }] }),
    );
    expect(JSON.stringify(a)).to.equal(JSON.stringify(b));
    expect(JSON.stringify(materialise(liveNode({}, records), context([facts('ber1'), facts('ams1')])))).to.equal(
      JSON.stringify(materialise(liveNode({}, records), context([facts('ber1'), facts('ams1')]))),
    );
  });
});
