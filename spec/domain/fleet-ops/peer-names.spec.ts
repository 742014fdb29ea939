import { expect } from 'chai';
import { fitName, sessionNames } from '../../../domain/fleet-ops/names.js';
import { planPeerNames } from '../../../domain/fleet-ops/peer-names.js';
import { applied, iface, nodeNamed, peering, session } from './support.js';

describe('fleet ops: normalize peer names (domain)', () => {
  const external = () =>
    nodeNamed(
      'fra1',
      { base_template: { bird: { internal_topology: { hosts: [{ name: 'web', addresses: ['172.20.0.10/32'], interface: 'wg-alice' }] } } } },
      {
        peerings: [peering(1, { name: 'alice', remote_asn: 4242420002 })],
        interfaces: [iface(10, { name: 'wg-alice', listen_port: 51801 }, { peering_id: 1 })],
        sessions: [session(20, { name: 'alice_v6', remote_asn: 4242420002, neighbor_address: 'fe80::2%wg-alice', interface: null }, { peering_id: 1 })],
      },
    );

  it('names an external peering, its interface and its session dn42_<asn>, and keeps the old peering name as remote_label', () => {
    const node = external();
    const after = applied(node, planPeerNames(node).events);
    expect(after.peerings[0]).to.deep.include({ name: 'dn42_4242420002', remote_label: 'alice' });
    expect(after.interfaces[0].spec.name).to.equal('dn42_4242420002');
    expect(after.interfaces[0].spec.name).to.have.length(15);
    expect(after.sessions[0].spec.name).to.equal('dn42_4242420002');
  });

  it('carries an interface rename into the session %zone and the template hosts behind it', () => {
    const node = external();
    const after = applied(node, planPeerNames(node).events);
    expect(after.sessions[0].spec.neighbor_address).to.equal('fe80::2%dn42_4242420002');
    expect((after.fields.base_template as any).bird.internal_topology.hosts[0].interface).to.equal('dn42_4242420002');
    const withRef = nodeNamed(
      'fra1',
      {},
      {
        ...external(),
        peerings: [peering(1, { remote_asn: 7 })],
        interfaces: [iface(10, { name: 'old' }, { peering_id: 1 })],
        sessions: [session(20, { interface: 'old', neighbor_address: 'fe80::2' }, { peering_id: 1 })],
      },
    );
    expect(applied(withRef, planPeerNames(withRef).events).sessions[0].spec.interface).to.equal('dn42_7');
  });

  it('names an internal peering int_<node>, cutting a long node id to 15 characters the same way every time', () => {
    const node = nodeNamed(
      'fra1',
      {},
      {
        peerings: [peering(1, { name: 'x', is_internal: true, remote_node_id: 'amsterdam-core-01' })],
        interfaces: [iface(10, { name: 'wgx' }, { peering_id: 1 })],
      },
    );
    const after = applied(node, planPeerNames(node).events);
    expect(after.peerings[0].name).to.equal('int_amsterdam-core-01');
    expect(after.interfaces[0].spec.name).to.equal(fitName('int_amsterdam-core-01', 15));
    expect(after.interfaces[0].spec.name).to.match(/^int_amster_[0-9a-f]{4}$/);
  });

  it('suffixes several sessions by address family, or by position when two share one', () => {
    const v4 = session(1, { neighbor_address: '172.20.1.1', interface: null });
    const v6 = session(2, { neighbor_address: 'fd00::1', interface: null });
    const mp = session(3, { neighbor_address: 'fe80::1%wg0' });
    expect(sessionNames('dn42_7', [v4, v6])).to.deep.equal(['dn42_7_v4', 'dn42_7_v6']);
    expect(sessionNames('dn42_7', [mp])).to.deep.equal(['dn42_7']);
    expect(sessionNames('dn42_7', [v4, session(4, { neighbor_address: '172.20.1.2', interface: null })])).to.deep.equal(['dn42_7_1', 'dn42_7_2']);
    expect(sessionNames('int_a.b-c', [mp])).to.deep.equal(['int_a_b_c']);
  });

  it('reports orphans, further interfaces of a peering and a second peering of one AS, and changes none of them (a freed name is taken)', () => {
    const node = nodeNamed(
      'fra1',
      {},
      {
        peerings: [peering(1, { name: 'p', remote_asn: 7 }), peering(2, { name: 'dn42_8', remote_asn: 9 }), peering(3, { name: 'q', remote_asn: 7 })],
        interfaces: [iface(10, { name: 'a' }, { peering_id: 1 }), iface(11, { name: 'b' }, { peering_id: 1, sort_order: 1 }), iface(12, { name: 'orphan' })],
        sessions: [session(20, { name: 'lonely' })],
      },
    );
    const plan = planPeerNames(node);
    expect(plan.details.skipped.map((s) => [s.kind, s.name, s.reason])).to.deep.equal([
      ['interface', 'b', 'peering p has several interfaces; only the first takes the conventional name'],
      ['interface', 'orphan', 'no peering; run the peering backfill first'],
      ['bgp_session', 'lonely', 'no peering; run the peering backfill first'],
      ['peering', 'q', 'name dn42_7 is kept by another peering'],
    ]);
    const after = applied(node, plan.events);
    expect(after.peerings.map((p) => p.name)).to.deep.equal(['dn42_7', 'dn42_9', 'q']);
    expect(after.interfaces.map((i) => i.spec.name)).to.deep.equal(['dn42_7', 'b', 'orphan']);
  });

  it('leaves a remote_label that is set, and has nothing to do on a second run', () => {
    const node = nodeNamed('fra1', {}, { peerings: [peering(1, { name: 'p', remote_asn: 7, remote_label: 'Alice' })] });
    const after = applied(node, planPeerNames(node).events);
    expect(after.peerings[0]).to.deep.include({ name: 'dn42_7', remote_label: 'Alice' });
    expect(planPeerNames(after).events).to.deep.equal([]);
    const big = external();
    const once = applied(big, planPeerNames(big).events);
    expect(planPeerNames(once).events).to.deep.equal([]);
    expect(planPeerNames(once).details.changes).to.deep.equal([]);
  });
});
