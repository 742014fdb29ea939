import { expect } from 'chai';
import { materialise } from '../../../domain/desired-state/materialise.js';
import { MATERIALIZATION_FAILED, validateDesiredState, type DesiredState } from '../../../domain/desired-state/schema.js';
import { context, facts, iface, key, liveNode, peering, session } from './fixtures.js';

function fullDocument(): DesiredState {
  const node = liveNode(
    {
      labels: { region: 44 },
      base_template: {
        runtime: { wireguard_port_range: '51800-51830' },
        bird: {
          cold_potato_med: 50,
          route_local_pref: [{ prefix: 'fd00:1::/48', local_pref: 300 }],
          blocked_prefixes: ['172.22.0.0/24'],
          internal_topology: { routers: ['zrh1'], hosts: [{ name: 'dns', addresses: ['172.20.0.30/32', 'fd00:1::30/128'], interface: 'br0' }] },
        },
      },
    },
    {
      peerings: [peering(1), peering(2, { is_internal: true, remote_node_id: 'ber1' })],
      interfaces: [
        iface(
          1,
          {
            listen_port: 51801,
            peer_link_local: 'fe80::2',
            peer: { public_key: key('B'), endpoint: '[2001:db8::1]:51820', allowed_ips: ['172.20.0.0/14', 'fd00::/8'], persistent_keepalive_seconds: 25 },
          },
          { peering_id: 1 },
        ),
        iface(2, { listen_port: 52801, addresses: ['fe80::1:1/64'], mtu: 1280, cost: 10 }, { peering_id: 2 }),
      ],
      sessions: [
        session(1, { bandwidth: 24, local_pref: 150, bfd: true }, { peering_id: 1 }),
        session(3, { neighbor_address: '172.20.9.1', interface: null, source_address: '172.20.0.1', policy: 'route_collector' }),
      ],
    },
  );
  return materialise(node, context([facts('ber1', { wireguard_public_key: key('C') }), facts('zrh1', { loopback_ipv4: '172.20.0.3' })]));
}

describe('desired-state schema', () => {
  it('accepts what materialise makes of a node that uses every part of it', () => {
    const doc = fullDocument();
    expect(doc.interfaces).to.have.length(2);
    expect(doc.bgp_sessions).to.have.length(2);
    expect(doc.bird.internal_topology.routers).to.have.length(2);
    expect(validateDesiredState(doc)).to.deep.equal({ ok: true });
    expect(validateDesiredState(JSON.parse(JSON.stringify(doc)))).to.deep.equal({ ok: true });
  });

  it('rejects a broken document with the location of each fault', () => {
    const doc = structuredClone(fullDocument()) as unknown as Record<string, any>;
    doc.interfaces[0].name = 'wireguard-to-a-peer';
    doc.interfaces[1].addresses[0].address = 'fe80::zz/64';
    doc.bgp_sessions[1].neighbor = '10.1';
    doc.bird.blocked_prefixes.push('172.20.0.0');
    delete doc.node.router_id;
    doc.surprise = true;
    const result = validateDesiredState(doc);
    expect(result.ok).to.equal(false);
    const locs = result.ok ? [] : result.errors.map((e) => e.loc);
    expect(locs).to.deep.include.members([
      ['state', 'surprise'],
      ['state', 'node', 'router_id'],
      ['state', 'interfaces', 0, 'name'],
      ['state', 'interfaces', 1, 'addresses', 0, 'address'],
      ['state', 'bgp_sessions', 1, 'neighbor'],
      ['state', 'bird', 'blocked_prefixes', 1],
    ]);
  });

  it('rejects a link-local node address with a zone and an address outside fe80::/10', () => {
    for (const link_local of ['fe80::1%eth0', 'fd00::1']) {
      const doc = { ...fullDocument(), node: { ...fullDocument().node, link_local } };
      expect(validateDesiredState(doc)).to.deep.include({ ok: false });
    }
  });

  it('rejects two interfaces or two sessions with the same name', () => {
    const doc = fullDocument();
    doc.interfaces[1].name = doc.interfaces[0].name;
    doc.bgp_sessions[1].name = doc.bgp_sessions[0].name;
    expect(validateDesiredState(doc)).to.deep.equal({
      ok: false,
      errors: [
        { loc: ['state', 'interfaces', 1, 'name'], msg: "duplicate name 'wg1'", type: 'unique' },
        { loc: ['state', 'bgp_sessions', 1, 'name'], msg: "duplicate name 's1'", type: 'unique' },
      ],
    });
  });

  it('rejects a document that is not an object', () => {
    expect(validateDesiredState(null)).to.deep.include({ ok: false });
    expect(validateDesiredState('{}')).to.deep.include({ ok: false });
  });

  it('names the refusal text of the contract', () => {
    expect(MATERIALIZATION_FAILED).to.equal('materialization failed schema validation');
  });
});

describe('desired-state defaults', () => {
  it("accepts the contract's minimal document and fills every default in place", () => {
    const doc: Record<string, unknown> = {
      node: { node_id: 'fra1', asn: 4242420001, router_id: '172.20.0.1' },
      interfaces: [{ name: 'wg0', addresses: [{ address: 'fe80::1/64' }] }],
      bgp_sessions: [{ name: 's1', remote_asn: 4242420002, neighbor: '172.20.9.1', address_family: 'ipv4' }],
      bird: { internal_topology: { routers: [], hosts: [] } },
    };
    expect(validateDesiredState(doc)).to.deep.equal({ ok: true });
    const full = doc as unknown as DesiredState;
    expect(full.schema_version).to.equal(1);
    expect(full.dns).to.equal(null);
    expect(full.node).to.deep.equal({
      node_id: 'fra1',
      asn: 4242420001,
      router_id: '172.20.0.1',
      site: null,
      region: null,
      loopback_ipv4: null,
      loopback_ipv6: null,
      link_local: null,
      ipv4_prefixes: [],
      ipv6_prefixes: [],
    });
    expect(full.interfaces[0]).to.deep.equal({
      name: 'wg0',
      kind: 'wireguard',
      scope: 'external',
      mtu: 1420,
      addresses: [{ address: 'fe80::1/64', peer: null }],
      listen_port: null,
      private_key_ref: 'node',
      peer: { public_key: null, preshared_key_ref: null, endpoint: null, allowed_ips: ['0.0.0.0/0', '::/0'], persistent_keepalive_seconds: null },
    });
    expect(full.bgp_sessions[0]).to.deep.include({
      interface: null,
      extended_next_hop: false,
      policy: 'peer',
      import_limit: 8500,
      import_limit_action: 'block',
      bfd: false,
    });
    expect(full.bird).to.deep.equal(materialise(liveNode(), context()).bird);
    // Filled documents are complete: a second validation changes nothing.
    const again = structuredClone(doc);
    validateDesiredState(again);
    expect(again).to.deep.equal(doc);
  });

  it('still requires the fields without a default', () => {
    const result = validateDesiredState({
      node: { node_id: 'fra1', asn: 1 },
      interfaces: [],
      bgp_sessions: [{ name: 's1', remote_asn: 1, neighbor: '10.0.0.1' }],
      bird: {},
    });
    expect(result.ok).to.equal(false);
    expect(result.ok ? [] : result.errors.map((e) => e.loc)).to.deep.equal([
      ['state', 'node', 'router_id'],
      ['state', 'bgp_sessions', 0, 'address_family'],
      ['state', 'bird', 'internal_topology'],
    ]);
  });
});
