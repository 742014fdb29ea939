import { expect } from 'chai';
import { planKeys } from '../../../domain/fleet-ops/keys.js';
import { applied, iface, key, nodeNamed, peering } from './support.js';

describe('fleet ops: migrate keys (domain)', () => {
  const node = () =>
    nodeNamed(
      'fra1',
      {},
      {
        peerings: [
          peering(1, { name: 'int_ams1', is_internal: true, remote_node_id: 'ams1' }),
          peering(2, { name: 'int_new1', is_internal: true, remote_node_id: 'new1' }),
          peering(3, { name: 'dn42_7', remote_asn: 7 }),
        ],
        interfaces: [
          iface(10, { name: 'int_ams1', peer: { public_key: key('O'), endpoint: 'ams1.example.net:52800' } }, { peering_id: 1 }),
          iface(11, { name: 'int_new1', peer: { public_key: key('P') } }, { peering_id: 2 }),
          iface(12, { name: 'dn42_7', peer: { public_key: key('E') } }, { peering_id: 3 }),
        ],
      },
    );
  const keys = new Map<string, string | null>([
    ['ams1', key('N')],
    ['new1', null],
  ]);

  it('drops the pinned key of an internal link whose remote registered one, keeping the rest of the peer', () => {
    const plan = planKeys(node(), (id) => keys.get(id), false);
    expect(plan.details.changes).to.deep.equal([
      { node_id: 'fra1', kind: 'interface', id: 10, name: 'int_ams1', field: 'spec.peer.public_key', from: key('O'), to: null },
    ]);
    const after = applied(node(), plan.events);
    expect(after.interfaces[0].spec.peer).to.deep.equal({ endpoint: 'ams1.example.net:52800' });
  });

  it("keeps the pin while the remote has no key, and never touches an external peer's key", () => {
    const plan = planKeys(node(), (id) => keys.get(id), false);
    expect(plan.details.skipped.map((s) => s.reason)).to.deep.equal(['remote node new1 has registered no key yet; the pinned key stays']);
    const after = applied(node(), plan.events);
    expect(after.interfaces[1].spec.peer?.public_key).to.equal(key('P'));
    expect(after.interfaces[2].spec.peer?.public_key).to.equal(key('E'));
  });

  it('reports a registered key without escrow only when a recovery key is configured', () => {
    const keyed = { ...node(), wireguard: { public_key: key('F'), private_key_escrow: null } };
    expect(planKeys(keyed, (id) => keys.get(id), false).details.skipped.some((s) => s.kind === 'node')).to.equal(false);
    expect(
      planKeys(keyed, (id) => keys.get(id), true)
        .details.skipped.filter((s) => s.kind === 'node')
        .map((s) => s.reason),
    ).to.deep.equal(['registered key has no escrow; the agent adds it with its next key report']);
  });

  it('has nothing to change on a second run', () => {
    const after = applied(node(), planKeys(node(), (id) => keys.get(id), false).events);
    expect(planKeys(after, (id) => keys.get(id), false).events).to.deep.equal([]);
  });
});
