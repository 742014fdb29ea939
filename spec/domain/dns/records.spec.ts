import { expect } from 'chai';
import { Validation } from '../../../domain/errors.js';
import { checkRecordContent, type RecordType } from '../../../domain/dns/records.js';
import { isRecordName } from '../../../domain/dns/names.js';

/** [type, given, stored] */
const VALID: [RecordType, string, string][] = [
  ['A', ' 172.20.0.53 ', '172.20.0.53'],
  ['AAAA', 'FD42:4242:0:0::1', 'fd42:4242::1'],
  ['CNAME', 'www', 'www'],
  ['CNAME', 'host.example.dn42.', 'host.example.dn42.'],
  ['CNAME', '1.0/26.2.0.192.in-addr.arpa.', '1.0/26.2.0.192.in-addr.arpa.'],
  ['NS', '@', '@'],
  ['PTR', 'router.fra1.example.dn42.', 'router.fra1.example.dn42.'],
  ['MX', '10   mail.example.dn42.', '10 mail.example.dn42.'],
  ['SRV', '0 5 5060 sip.example.dn42.', '0 5 5060 sip.example.dn42.'],
  ['SRV', '0 0 0 .', '0 0 0 .'],
  ['TXT', 'v=spf1 -all', '"v=spf1 -all"'],
  ['TXT', 'say "hi" \\o/', '"say \\"hi\\" \\\\o/"'],
  ['TXT', '"one" "two; three"', '"one" "two; three"'],
  ['TXT', 'x'.repeat(300), `"${'x'.repeat(255)}" "${'x'.repeat(45)}"`],
  ['CAA', '0 issue letsencrypt.org', '0 issue "letsencrypt.org"'],
  ['CAA', '128 IODEF "mailto:ca@example.dn42"', '128 iodef "mailto:ca@example.dn42"'],
  ['DS', '12345 13 2 ab cd EF 01', '12345 13 2 ABCDEF01'],
  ['SSHFP', '4 2 0123456789abcdef', '4 2 0123456789ABCDEF'],
  ['TLSA', '3 1 1 deadbeef', '3 1 1 DEADBEEF'],
];

const INVALID: [RecordType, string][] = [
  ['A', '172.20.0.256'],
  ['A', '10.1'],
  ['A', 'fd42::1'],
  ['A', '172.20.0.1\nevil A 1.2.3.4'],
  ['AAAA', '172.20.0.1'],
  ['AAAA', 'fe80::1%eth0'],
  ['CNAME', 'two names'],
  ['CNAME', 'bad..name'],
  ['CNAME', 'x ; comment'],
  ['NS', '(ns1)'],
  ['MX', 'mail.example.dn42.'],
  ['MX', '70000 mail.example.dn42.'],
  ['SRV', '0 5 sip.example.dn42.'],
  ['TXT', '"unterminated'],
  ['TXT', '"a""b"'],
  ['TXT', `"${'x'.repeat(256)}"`],
  ['TXT', 'line\nbreak'],
  ['CAA', '256 issue "x"'],
  ['CAA', '0 issue x y'],
  ['DS', '12345 13 2 abc'],
  ['SSHFP', '4 2 nothex'],
  ['TLSA', '3 1 deadbeef'],
];

describe('dns record content', () => {
  for (const [type, given, stored] of VALID) {
    it(`${type} ${JSON.stringify(given).slice(0, 40)} is stored as ${JSON.stringify(stored).slice(0, 40)}`, () => {
      expect(checkRecordContent(type, given)).to.equal(stored);
    });
  }

  for (const [type, given] of INVALID) {
    it(`${type} refuses ${JSON.stringify(given).slice(0, 40)} (422 on content)`, () => {
      let caught: unknown;
      try {
        checkRecordContent(type, given);
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(Validation);
      expect((caught as Validation).message).to.equal(`invalid ${type} record content`);
      expect((caught as Validation).errors[0].loc).to.deep.equal(['body', 'content']);
    });
  }

  it('owner names are @, *, *.x or relative names without a trailing dot', () => {
    for (const ok of ['@', '*', '*.lab', 'www', '_sip._udp', '1', '0/26', 'a-b.c']) expect(isRecordName(ok), ok).to.equal(true);
    for (const bad of ['www.', '-a', 'a..b', '*x', 'a b', '@.x', '']) expect(isRecordName(bad), bad).to.equal(false);
  });
});
