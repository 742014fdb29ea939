import { expect } from 'chai';
import { prefixSortKey } from '../../../domain/telemetry/routing.js';

describe('domain: routing prefix sort key', () => {
  const cases: [string, string | null][] = [
    ['172.20.0.0/24', 'ac140000/024'],
    ['0.0.0.0/0', '00000000/000'],
    ['255.255.255.255/32', 'ffffffff/032'],
    ['fd42::/16', 'fd420000000000000000000000000000/016'],
    ['::/0', '00000000000000000000000000000000/000'],
    ['::1/128', '00000000000000000000000000000001/128'],
    ['fd42:1::/48', 'fd420001000000000000000000000000/048'],
    ['fd42:1:2:3:4:5:6:7/128', 'fd420001000200030004000500060007/128'],
    ['FD42:ABCD::1:2/64', 'fd42abcd000000000000000000010002/064'],
    ['1:2:3:4:5:6:7::/64', '00010002000300040005000600070000/064'],
    ['::1:2:3:4:5:6:7/64', '00000001000200030004000500060007/064'],
  ];
  for (const [prefix, key] of cases) it(`keys ${prefix} as ${key}`, () => expect(prefixSortKey(prefix)).to.equal(key));

  const unreadable = [
    '256.1.1.1/24',
    '1.2.3/24',
    '1.2.3.4.5/24',
    '1..3.4/24',
    '1.2.3.4/33',
    '1234.1.1.1/8',
    'fd42::1::2/64',
    'fd42:12345::/64',
    'fd42:1:2:3:4:5:6/64',
    'fd42:1:2:3:4:5:6:7:8/64',
    ':fd42::/64',
    'fd42:::/64',
    'fd42::/129',
    'fd42:/64',
    ':/64',
  ];
  it('answers null for text the report schema lets through but that is no address', () => {
    for (const prefix of unreadable) expect(prefixSortKey(prefix), prefix).to.equal(null);
  });

  it('orders by address then length', () => {
    const sorted = ['172.20.16.0/20', '172.20.1.0/24', '172.20.0.0/25', '172.20.0.0/24', '10.0.0.0/8'].sort((a, b) =>
      prefixSortKey(a)!.localeCompare(prefixSortKey(b)!),
    );
    expect(sorted).to.deep.equal(['10.0.0.0/8', '172.20.0.0/24', '172.20.0.0/25', '172.20.1.0/24', '172.20.16.0/20']);
  });
});
