import { expect } from 'chai';
import { Conflict, Validation } from '../../../domain/errors.js';
import { PORT_POOLS, checkListenPort, validateNodeFields } from '../../../domain/node/port-policy.js';
import { parsePortRange } from '../../../domain/net/ports.js';
import { iface, liveNode, peering } from '../desired-state/fixtures.js';

const withRange = (range: unknown) => liveNode({ base_template: { runtime: { wireguard_port_range: range } } });
const candidate = (listen_port: number | null, extra: { enabled?: boolean; peering_id?: number | null; id?: number } = {}) => ({
  spec: { name: 'wgnew', kind: 'wireguard' as const, listen_port },
  enabled: extra.enabled ?? true,
  peering_id: extra.peering_id ?? null,
  id: extra.id,
});

describe('WireGuard port policy', () => {
  it('publishes the fleet pools of the contract', () => {
    expect(PORT_POOLS).to.deep.equal({ external: { start: 51800, end: 51830 }, internal: { start: 52800, end: 52820 } });
  });

  it('accepts a port inside the node range in each of its three shapes', () => {
    for (const range of ['20000-20010', [20000, 20010], { start: 20000, end: 20010 }]) {
      expect(() => checkListenPort(withRange(range), candidate(20010))).not.to.throw();
      expect(() => checkListenPort(withRange(range), candidate(20011))).to.throw(
        Validation,
        /^wireguard listen_port must be inside node runtime.wireguard_port_range 20000-20010$/,
      );
    }
  });

  it('uses the external pool segment without a node range', () => {
    expect(() => checkListenPort(liveNode(), candidate(51830))).not.to.throw();
    expect(() => checkListenPort(liveNode(), candidate(52800))).to.throw(
      Validation,
      'wireguard listen_port must be inside node runtime.wireguard_port_range 51800-51830',
    );
  });

  it('uses the internal pool segment for an interface of an internal peering', () => {
    const node = liveNode({}, { peerings: [peering(1, { is_internal: true, remote_node_id: 'ber1' })] });
    expect(() => checkListenPort(node, candidate(52800, { peering_id: 1 }))).not.to.throw();
    expect(() => checkListenPort(node, candidate(51801, { peering_id: 1 }))).to.throw(
      Validation,
      'wireguard listen_port must be inside node runtime.wireguard_port_range 52800-52820',
    );
  });

  it('rejects a second enabled interface on the same listen port', () => {
    const node = liveNode({}, { interfaces: [iface(1, { name: 'wg-peer', listen_port: 51805 })] });
    expect(() => checkListenPort(node, candidate(51805))).to.throw(Conflict, /^wireguard listen_port 51805 is already used by interface 'wg-peer'$/);
  });

  it('lets an interface keep its own port, and ignores disabled interfaces and ports left unset', () => {
    const node = liveNode({}, { interfaces: [iface(1, { listen_port: 51805 }), iface(2, { listen_port: 51806 }, { enabled: false })] });
    expect(() => checkListenPort(node, candidate(51805, { id: 1 }))).not.to.throw();
    expect(() => checkListenPort(node, candidate(51806))).not.to.throw();
    expect(() => checkListenPort(node, candidate(51805, { enabled: false }))).not.to.throw();
    expect(() => checkListenPort(node, candidate(null))).not.to.throw();
    expect(() => checkListenPort(node, candidate(9, { enabled: false }))).not.to.throw();
  });

  it('checks the range before the duplicate', () => {
    const node = liveNode({}, { interfaces: [iface(1, { listen_port: 40000 })] });
    expect(() => checkListenPort(node, candidate(40000))).to.throw(Validation);
  });

  it('refuses a node range it cannot read', () => {
    expect(() => checkListenPort(withRange('51830-51800'), candidate(51801))).to.throw(Validation, 'invalid runtime.wireguard_port_range');
    expect(parsePortRange('1-65535')).to.deep.equal({ start: 1, end: 65535 });
    expect(parsePortRange([0, 10])).to.equal(null);
    expect(parsePortRange('51800:51830')).to.equal(null);
  });
});

describe('node field checks', () => {
  const errorsOf = (fn: () => void) => {
    try {
      fn();
    } catch (e) {
      return e;
    }
    return null;
  };

  it('accepts link-local addresses inside fe80::/10 and valid loopbacks and prefixes', () => {
    expect(() =>
      validateNodeFields({
        link_local: 'fe80::1',
        loopback_ipv4: '172.20.0.1',
        loopback_ipv6: 'fd00::1',
        ipv4_prefixes: ['172.20.0.0/27'],
        ipv6_prefixes: ['fd00::/48'],
      }),
    ).not.to.throw();
    expect(() => validateNodeFields({ link_local: 'febf:ffff::1' })).not.to.throw();
    expect(() => validateNodeFields({ link_local: null })).not.to.throw();
  });

  for (const bad of ['fe80::1%eth0', 'fec0::1', 'fd00::1', '169.254.0.1', 'not-an-address']) {
    it(`refuses link_local ${bad} with invalid link_local`, () => {
      const error = errorsOf(() => validateNodeFields({ link_local: bad }));
      expect(error).to.be.instanceOf(Validation).and.have.property('message', 'invalid link_local');
      expect((error as Validation).errors.map((e) => e.loc)).to.deep.equal([['body', 'link_local']]);
    });
  }

  it('refuses loopbacks of the wrong family and prefixes without a length', () => {
    const error = errorsOf(() =>
      validateNodeFields({
        loopback_ipv4: 'fd00::1',
        loopback_ipv6: '10.0.0.1',
        ipv4_prefixes: ['172.20.0.0/27', '172.20.0.0'],
        ipv6_prefixes: ['172.20.0.0/24'],
      }),
    ) as Validation;
    expect(error).to.be.instanceOf(Validation);
    expect(error.message).to.equal('invalid loopback_ipv4');
    expect(error.errors.map((e) => e.loc)).to.deep.equal([
      ['body', 'loopback_ipv4'],
      ['body', 'loopback_ipv6'],
      ['body', 'ipv4_prefixes', 1],
      ['body', 'ipv6_prefixes', 0],
    ]);
  });
});
