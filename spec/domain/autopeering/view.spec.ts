import { expect } from 'chai';
import { displayedOf, provisionOf, type PeeringParts } from '../../../domain/autopeering/view.js';

const node = { asn: 4242420001, link_local: 'fe80::1', wireguard_public_key: null, endpoint_host: '192.0.2.1' };
const iface = (addresses: string[]) => ({
  name: 'dn42_4242420010',
  spec: { name: 'dn42_4242420010', kind: 'wireguard' as const, listen_port: 51800, addresses, peer_link_local: 'fe80::10' },
});

describe('portal provision block: our tunnel addresses', () => {
  it('two plain sessions: from the sessions’ source addresses towards the peer’s addresses', () => {
    const peering: PeeringParts = {
      node_id: 'fra1',
      name: 'autopeer_4242420010',
      notes: null,
      interfaces: [iface(['fe80::1/64', '172.20.0.1/32 peer 172.20.42.2/32', 'fd42:4242:1::1/128 peer fd42:4242:10::2/128'])],
      sessions: [
        { name: 'v4', spec: { name: 'v4', remote_asn: 4242420010, neighbor_address: '172.20.42.2', source_address: '172.20.0.9', address_family: 'ipv4' } },
        { name: 'v6', spec: { name: 'v6', remote_asn: 4242420010, neighbor_address: 'fd42:4242:10::2', address_family: 'ipv6' } },
      ],
    };
    const view = provisionOf(null, displayedOf(null, peering), node, peering);
    // v4: the session's source address wins; v6: no source address, the interface's `ours peer theirs` says.
    expect(view).to.deep.include({ node_ipv4: '172.20.0.9', node_ipv6: 'fd42:4242:1::1', endpoint: '192.0.2.1:51800' });
  });

  it('link-local form: both null; a record made before the fields were kept: null', () => {
    const peering: PeeringParts = {
      node_id: 'fra1',
      name: 'p',
      notes: null,
      interfaces: [iface(['fe80::1/64'])],
      sessions: [
        { name: 'p', spec: { name: 'p', remote_asn: 4242420010, neighbor_address: 'fe80::10', address_family: 'mp-bgp', interface: 'dn42_4242420010' } },
      ],
    };
    expect(provisionOf(null, displayedOf(null, peering), node, peering)).to.deep.include({ node_ipv4: null, node_ipv6: null });
    const shown = { ...displayedOf(null, peering), from_snapshot: true };
    const old = {
      endpoint: null,
      listen_port: 1,
      node_public_key: null,
      node_link_local: 'fe80::1',
      node_asn: 1,
      mtu: 1420,
      interface_name: 'x',
      session_names: [],
    };
    expect(provisionOf(old, shown, null)).to.deep.include({ node_ipv4: null, node_ipv6: null });
    expect(provisionOf({ ...old, node_ipv4: null, node_ipv6: 'fd42::1' }, shown, null)).to.deep.include({ node_ipv6: 'fd42::1' });
  });
});
