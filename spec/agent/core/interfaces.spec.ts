import { expect } from 'chai';
import { removalCommands } from '../../../agent/apply/interfaces.js';
import { addressPresent } from '../../../agent/apply/ip-addresses.js';
import { parseEvent } from '../../../agent/channel.js';
import { capabilities } from '../../../agent/inventory.js';
import { DEFAULT_COMMANDS } from '../../../agent/runtime.js';
import { validateDesiredState, type DesiredState } from '../../../domain/desired-state/schema.js';
import { desiredState, wireguardInterface } from '../support/core.js';

const state = (interfaces: object[], node: object = {}): DesiredState => {
  const doc = desiredState('fra1', { interfaces }) as { node: object };
  doc.node = { ...doc.node, ...node };
  const checked = validateDesiredState(doc);
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return doc as unknown as DesiredState;
};

describe('agent: what an apply removes, what the channel accepts, what the inventory offers', () => {
  it('deletes WireGuard devices that left the state and addresses that left a kept device or the loopback', () => {
    const a = wireguardInterface('dn42_a', 51801);
    const b = wireguardInterface('dn42_b', 51802);
    const before = state(
      [
        a,
        {
          ...b,
          addresses: [
            { address: 'fe80::1/64', peer: 'fe80::2/128' },
            { address: '172.20.0.33/32', peer: '172.20.0.34/32' },
          ],
        },
      ],
      { loopback_ipv4: '172.20.0.1' },
    );
    const after = state([b]);
    expect(removalCommands(after, before)).to.deep.equal([
      ['link', 'del', 'dev', 'dn42_a'],
      ['address', 'del', '172.20.0.1/32', 'dev', 'lo'],
      ['address', 'del', '172.20.0.33/32', 'peer', '172.20.0.34/32', 'dev', 'dn42_b'],
    ]);
    expect(removalCommands(after, null)).to.deep.equal([]);
    expect(removalCommands(before, before)).to.deep.equal([]);
    // Only the peer moved: the kernel keys a point-to-point address by both, so the old one goes.
    const moved = state([{ ...b, addresses: [{ address: 'fe80::1/64', peer: 'fe80::3/128' }] }]);
    expect(removalCommands(moved, after)).to.deep.equal([['address', 'del', 'fe80::1/64', 'peer', 'fe80::2/128', 'dev', 'dn42_b']]);
  });

  it('finds an address in `ip -j address show` output by local address, peer and the length the kernel keeps', () => {
    // addr_info entries as iproute2 prints them for `address replace fe80::1/64 peer fe80::2/128` and `172.20.0.1/32` on lo.
    const held = [
      { local: 'fe80::1', address: 'fe80::2', prefixlen: 128 },
      { local: '172.20.0.1', prefixlen: 32 },
      { local: 'fd42:4242:1::1', prefixlen: 128 },
    ];
    expect(addressPresent(held, { address: 'fe80::1/64', peer: 'fe80::2/128' })).to.equal(true);
    expect(addressPresent(held, { address: 'fe80::1/64', peer: 'fe80::3/128' })).to.equal(false);
    expect(addressPresent(held, { address: 'fe80::1/64', peer: null })).to.equal(false);
    expect(addressPresent(held, { address: '172.20.0.1/32', peer: null })).to.equal(true);
    expect(addressPresent(held, { address: '172.20.0.1', peer: null })).to.equal(true);
    expect(addressPresent(held, { address: '172.20.0.1/27', peer: null })).to.equal(false);
    expect(addressPresent(held, { address: 'fd42:4242:1:0:0::1/128', peer: null })).to.equal(true);
  });

  it('accepts the doorbells with the fields their type needs and ignores the rest', () => {
    const frame = (m: unknown) => Buffer.from(JSON.stringify(m));
    expect(parseEvent(frame({ type: 'hello', node_id: 'fra1', generation: 4 }))).to.deep.equal({ type: 'hello', node_id: 'fra1', generation: 4 });
    expect(parseEvent(frame({ type: 'hello', node_id: 'fra1' }))).to.deep.equal({ type: 'hello', node_id: 'fra1' });
    expect(parseEvent(frame({ type: 'desired_state_updated', generation: 5, reason: 'x' }))).to.deep.include({ generation: 5 });
    expect(parseEvent(frame({ type: 'desired_state_updated' }))).to.equal(undefined);
    expect(parseEvent(frame({ type: 'probe_request', spec: {} }))).to.equal(undefined);
    expect(parseEvent(frame({ type: 'log_request', log_id: 'l1', spec: { mode: 'tail' } }))).to.deep.include({ log_id: 'l1' });
    expect(parseEvent(frame({ type: 'agent_update_available', version: '1.0.9', wheels: [] }))).to.deep.include({ version: '1.0.9' });
    expect(parseEvent(frame({ type: 'something_new' }))).to.equal(undefined);
    expect(parseEvent(Buffer.from('not json'))).to.equal(undefined);
  });

  it('names capabilities by the tools present', () => {
    const present = new Set(['bird', 'birdc', 'wg', 'ping']);
    expect(capabilities(DEFAULT_COMMANDS, (p) => present.has(p))).to.deep.equal(['bird', 'ping']);
    expect(capabilities(DEFAULT_COMMANDS, () => true)).to.deep.equal(['bird', 'wireguard', 'dns', 'ping', 'mtr', 'traceroute']);
    // The implementation in use, when the agent resolved one (an apply), beside `wireguard`.
    expect(capabilities(DEFAULT_COMMANDS, () => true, 'userspace')).to.deep.equal([
      'bird',
      'wireguard',
      'wireguard-userspace',
      'dns',
      'ping',
      'mtr',
      'traceroute',
    ]);
    expect(capabilities(DEFAULT_COMMANDS, (p) => p !== 'wg', 'kernel')).not.to.include('wireguard-kernel');
  });
});
