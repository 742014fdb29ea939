import { expect } from 'chai';
import { judgeAddress, parseCidrs } from '../../../domain/notify/address-policy.js';

describe('Webhook address policy (issue 32)', () => {
  const none = parseCidrs([]);
  for (const [address, reason] of [
    ['127.0.0.1', '127.0.0.1 is not a public address (loopback)'],
    ['::1', '::1 is not a public address (loopback)'],
    ['10.1.2.3', '10.1.2.3 is not a public address (private)'],
    ['192.168.1.1', '192.168.1.1 is not a public address (private)'],
    ['172.20.0.53', '172.20.0.53 is not a public address (private)'],
    ['100.64.0.1', '100.64.0.1 is not a public address (carrierGradeNat)'],
    ['169.254.169.254', '169.254.169.254 is not a public address (linkLocal)'],
    ['fe80::1', 'fe80::1 is not a public address (linkLocal)'],
    ['fd42:4242::1', 'fd42:4242::1 is not a public address (uniqueLocal)'],
    ['::ffff:127.0.0.1', '127.0.0.1 is not a public address (loopback)'],
    ['0.0.0.0', '0.0.0.0 is not a public address (unspecified)'],
    ['224.0.0.1', '224.0.0.1 is not a public address (multicast)'],
    ['198.18.0.1', '198.18.0.1 is not a public address (reserved)'],
  ] as const) {
    it(`refuses ${address}`, () => expect(judgeAddress(address, none)).to.deep.equal({ allowed: false, reason }));
  }

  it('allows public unicast addresses, and listed private ranges', () => {
    expect(judgeAddress('93.184.216.34', none)).to.deep.equal({ allowed: true });
    expect(judgeAddress('2a00:1450:4001::1', none)).to.deep.equal({ allowed: true });
    const allow = parseCidrs(['127.0.0.0/8', 'fd42:4242::/32']);
    expect(judgeAddress('127.0.0.1', allow)).to.deep.equal({ allowed: true });
    expect(judgeAddress('::ffff:127.0.0.1', allow)).to.deep.equal({ allowed: true });
    expect(judgeAddress('fd42:4242::1', allow)).to.deep.equal({ allowed: true });
    expect(judgeAddress('::1', allow).allowed).to.equal(false);
    expect(judgeAddress('not-an-ip', allow)).to.deep.equal({ allowed: false, reason: 'not-an-ip is not an IP address' });
  });
});
