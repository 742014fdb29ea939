import { expect } from 'chai';
import { parseEndpoint, planInternalPorts } from '../../../domain/fleet-ops/internal-ports.js';
import type { LiveNode } from '../../../domain/node/state.js';
import { applied, iface, nodeNamed, peering } from './support.js';

describe('fleet ops: migrate internal ports (domain)', () => {
  const fleet = (): LiveNode[] => [
    nodeNamed(
      'fra1',
      {},
      {
        peerings: [peering(1, { name: 'int_ams1', is_internal: true, remote_node_id: 'ams1' }), peering(2, { name: 'dn42_7', remote_asn: 7 })],
        interfaces: [
          iface(10, { name: 'int_ams1', listen_port: 51805, peer: { endpoint: 'ams1.example.net:51806' } }, { peering_id: 1 }),
          iface(11, { name: 'dn42_7', listen_port: 51801 }, { peering_id: 2 }),
          iface(12, { name: 'spare', listen_port: 52800 }, { peering_id: 1, enabled: false, sort_order: 5 }),
        ],
      },
    ),
    nodeNamed(
      'ams1',
      {},
      {
        peerings: [peering(3, { name: 'int_fra1', is_internal: true, remote_node_id: 'fra1' })],
        interfaces: [iface(20, { name: 'int_fra1', listen_port: 51806, peer: { endpoint: '[2001:db8::1]:51805' } }, { peering_id: 3 })],
      },
    ),
  ];
  const after = (nodes: LiveNode[], plans: ReturnType<typeof planInternalPorts>) => nodes.map((n) => applied(n, plans.get(n.node_id)?.events ?? []));

  it('moves each internal port to the lowest free port of the pool and re-points the other end in the same plan', () => {
    const nodes = fleet();
    const [fra1, ams1] = after(nodes, planInternalPorts(nodes));
    expect(fra1.interfaces.map((i) => i.spec.listen_port)).to.deep.equal([52801, 51801, 52800]);
    expect(ams1.interfaces[0].spec.listen_port).to.equal(52800);
    expect(ams1.interfaces[0].spec.peer?.endpoint).to.equal('[2001:db8::1]:52801');
    expect(fra1.interfaces[0].spec.peer?.endpoint).to.equal('ams1.example.net:52800');
  });

  it('reports every change with its from and to', () => {
    const plans = planInternalPorts(fleet());
    expect(plans.get('ams1')!.details.changes.map((c) => [c.field, c.from, c.to])).to.deep.equal([
      ['spec.listen_port', 51806, 52800],
      ['spec.peer.endpoint', '[2001:db8::1]:51805', '[2001:db8::1]:52801'],
    ]);
  });

  it("keeps to the node's own port range where it overlaps the pool, and reports a node whose range does not", () => {
    const [fra1, ams1] = fleet();
    const narrow = { ...fra1, fields: { ...fra1.fields, base_template: { runtime: { wireguard_port_range: '51800-52810' } } } };
    const apart = { ...ams1, fields: { ...ams1.fields, base_template: { runtime: { wireguard_port_range: [51800, 51830] } } } };
    const plans = planInternalPorts([narrow, apart]);
    const [fraAfter, amsAfter] = after([narrow, apart], plans);
    expect(fraAfter.interfaces[0].spec.listen_port).to.equal(52801);
    // ams1 keeps its own port, but dials fra1's new one.
    expect(amsAfter.interfaces[0].spec).to.deep.include({ listen_port: 51806, peer: { endpoint: '[2001:db8::1]:52801' } });
    expect(plans.get('ams1')!.details.skipped.map((s) => s.reason)).to.deep.equal([
      'node runtime.wireguard_port_range 51800-51830 does not overlap the internal pool 52800-52820',
    ]);
  });

  it('reports an interface for which no port is left', () => {
    const [fra1] = fleet();
    const plans = planInternalPorts([fra1], { start: 52800, end: 52800 });
    expect(plans.get('fra1')!.details.skipped.map((s) => s.reason)).to.deep.equal(['no free port left in 52800-52800']);
    expect(plans.get('fra1')!.events).to.deep.equal([]);
  });

  it('has nothing to change on a second run', () => {
    const nodes = fleet();
    const once = after(nodes, planInternalPorts(nodes));
    expect([...planInternalPorts(once).values()].flatMap((p) => p.events)).to.deep.equal([]);
  });

  it('reads host:port and [v6]:port endpoints only', () => {
    expect(parseEndpoint('a.example:51820')).to.deep.equal({ host: 'a.example', port: 51820 });
    expect(parseEndpoint('[fd00::1]:5')).to.deep.equal({ host: '[fd00::1]', port: 5 });
    expect(parseEndpoint('fd00::1')).to.equal(undefined);
    expect(parseEndpoint('a.example')).to.equal(undefined);
  });
});
