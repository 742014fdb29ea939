import { expect } from 'chai';
import { RoaIndex, roasOf, roaSetEtag, type Roa } from '../../../domain/rpki/roa.js';

describe('domain: ROAs of registry route objects', () => {
  it('derives one ROA per origin; max-length defaults to the prefix length (RFC 6482); sorted IPv4 first', () => {
    const { roas, skipped } = roasOf([
      { prefix: 'fd42:4242:2601::/48', origins: [4242422601], maxLength: '64' },
      { prefix: '172.22.125.128/26', origins: [4242422601, 4242420001], maxLength: null },
      { prefix: '172.20.0.0/14', origins: [4242420000], maxLength: '21' },
      { prefix: 'fd42:0:0:0::/40', origins: [4242420003], maxLength: null },
    ]);
    expect(skipped).to.equal(0);
    expect(roas).to.deep.equal([
      { prefix: '172.20.0.0/14', max_length: 21, asn: 4242420000 },
      { prefix: '172.22.125.128/26', max_length: 26, asn: 4242420001 },
      { prefix: '172.22.125.128/26', max_length: 26, asn: 4242422601 },
      { prefix: 'fd42::/40', max_length: 40, asn: 4242420003 },
      { prefix: 'fd42:4242:2601::/48', max_length: 64, asn: 4242422601 },
    ]);
  });

  it('skips objects that cannot make a correct ROA: host bits set, max-length below the prefix length, beyond the width or not a number, no origin', () => {
    const { roas, skipped } = roasOf([
      { prefix: '172.20.0.1/24', origins: [1], maxLength: null },
      { prefix: '172.20.1.0/24', origins: [1], maxLength: '23' },
      { prefix: '172.20.2.0/24', origins: [1], maxLength: '33' },
      { prefix: 'fd42:1::/48', origins: [1], maxLength: '129' },
      { prefix: '172.20.3.0/24', origins: [1], maxLength: '28 # comment' },
      { prefix: '172.20.4.0/24', origins: [], maxLength: null },
      { prefix: 'not a prefix', origins: [1], maxLength: null },
      { prefix: '172.20.5.0/24', origins: [1], maxLength: ' 32 ' },
    ]);
    expect(roas).to.deep.equal([{ prefix: '172.20.5.0/24', max_length: 32, asn: 1 }]);
    expect(skipped).to.equal(7);
  });

  it('tags a set by its ROAs alone', () => {
    const a: Roa[] = [{ prefix: '172.20.0.0/24', max_length: 24, asn: 1 }];
    expect(roaSetEtag(a)).to.match(/^"roas-[0-9a-f]{32}"$/);
    expect(roaSetEtag(structuredClone(a))).to.equal(roaSetEtag(a));
    expect(roaSetEtag([{ ...a[0], max_length: 25 }])).not.to.equal(roaSetEtag(a));
  });
});

describe('domain: origin validation (RFC 6811)', () => {
  const index = new RoaIndex([
    { prefix: '172.20.8.0/22', max_length: 24, asn: 4242420002 },
    { prefix: '172.20.8.0/24', max_length: 24, asn: 4242420003 },
    { prefix: '172.20.16.0/24', max_length: 24, asn: 0 },
    { prefix: 'fd42:4242:1::/48', max_length: 56, asn: 4242420002 },
  ]);

  it('valid: a covering ROA names the origin and allows the length', () => {
    expect(index.state('172.20.8.0/22', 4242420002)).to.equal('valid');
    expect(index.state('172.20.9.0/24', 4242420002)).to.equal('valid');
    expect(index.state('172.20.8.0/24', 4242420003), 'a more specific ROA of another AS').to.equal('valid');
    expect(index.state('fd42:4242:1:ff00::/56', 4242420002)).to.equal('valid');
  });

  it('invalid: covered, but beyond every matching max-length, or by another origin only; AS0 and no origin match nothing', () => {
    expect(index.state('172.20.8.0/25', 4242420002)).to.equal('invalid');
    expect(index.state('fd42:4242:1::/57', 4242420002)).to.equal('invalid');
    expect(index.state('172.20.10.0/24', 4242420003)).to.equal('invalid');
    expect(index.state('172.20.16.0/24', 0)).to.equal('invalid');
    expect(index.state('172.20.9.0/24', null)).to.equal('invalid');
  });

  it('not_found: no ROA covers the prefix (a less specific route than a ROA is not covered)', () => {
    expect(index.state('172.20.12.0/24', 4242420002)).to.equal('not_found');
    expect(index.state('172.20.0.0/16', 4242420002)).to.equal('not_found');
    expect(index.state('fd42:4242:2::/48', 4242420002)).to.equal('not_found');
    expect(new RoaIndex([]).state('172.20.8.0/24', 1)).to.equal('not_found');
    expect(index.state('nonsense', 1)).to.equal('not_found');
  });
});
