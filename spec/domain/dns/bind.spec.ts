import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { recordNameErrors } from '../../../domain/dns/check-names.js';
import { defaultAdminEmail, defaultPrimaryNs } from '../../../domain/dns/desired-state.js';
import { checkRecordContent, type RecordType } from '../../../domain/dns/records.js';

const run = promisify(execFile);

/**
 * What the control server stores is what BIND reads: every record in its stored
 * form, written as one zone-file line, must load with the real `named-checkzone`
 * (BIND 9), including in an RFC 2317 classless zone. `-k fail` is what `named`
 * does with a primary zone (`named-checkzone` alone only warns about names
 * `check-names` refuses). The SOA names are the server's defaults for the zone.
 */
async function checkZone(origin: string, lines: string[]): Promise<{ ok: boolean; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'dns-spec-'));
  try {
    const file = join(dir, 'zone');
    const ns = defaultPrimaryNs(origin);
    const head = [
      `$ORIGIN ${origin}.`,
      '$TTL 3600',
      `@ IN SOA ${ns}. ${defaultAdminEmail(origin).replace('@', '.')}. 1 3600 900 604800 300`,
      `@ IN NS ${ns}.`,
      ...(ns === `ns1.${origin}` ? ['ns1 IN A 172.20.0.53'] : []),
    ];
    await writeFile(file, [...head, ...lines, ''].join('\n'));
    try {
      const { stdout, stderr } = await run('named-checkzone', ['-k', 'fail', '-i', 'local', origin, file]);
      return { ok: true, output: stdout + stderr };
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string };
      return { ok: false, output: (e.stdout ?? '') + (e.stderr ?? '') };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const line = (name: string, type: RecordType, content: string) => `${name} 300 IN ${type} ${checkRecordContent(type, content)}`;

describe('dns record content loads in BIND (named-checkzone)', function () {
  this.timeout(20000);

  it('a zone with every record type in its stored form loads', async () => {
    const result = await checkZone('example.dn42', [
      line('www', 'A', '172.20.0.80'),
      line('www', 'AAAA', 'FD42:4242:0::80'),
      line('alias', 'CNAME', 'www'),
      line('sub', 'NS', 'ns.sub.example.dn42.'),
      line('ns.sub', 'A', '172.20.0.81'),
      line('@', 'MX', '10 mail.example.dn42.'),
      line('mail', 'A', '172.20.0.25'),
      line('_sip._udp', 'SRV', '0 5 5060 www'),
      line('@', 'TXT', 'v=spf1 -all; say "hi" \\o/'),
      line('long', 'TXT', 'y'.repeat(600)),
      line('@', 'CAA', '0 issue letsencrypt.org'),
      line('sub', 'DS', '12345 13 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'),
      line('www', 'SSHFP', '4 2 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'),
      line('_443._tcp.www', 'TLSA', '3 1 1 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'),
      line('*.lab', 'A', '172.20.0.99'),
    ]);
    expect(result.output).to.match(/OK/);
    expect(result.ok, result.output).to.equal(true);
  });

  it('an RFC 2317 classless reverse zone with PTRs loads, and its parent delegates with CNAMEs', async () => {
    const child = await checkZone('0/26.2.0.192.in-addr.arpa', [line('1', 'PTR', 'router.example.dn42.')]);
    expect(child.ok, child.output).to.equal(true);
    const parent = await checkZone('2.0.192.in-addr.arpa', [line('0/26', 'NS', 'ns1.example.dn42.'), line('1', 'CNAME', '1.0/26.2.0.192.in-addr.arpa.')]);
    expect(parent.ok, parent.output).to.equal(true);
  });

  it('check-names: named refuses exactly the owners and targets the API refuses, and accepts the rest', async () => {
    const cases: [string, string, RecordType, string, boolean][] = [
      ['example.dn42', '_x', 'A', '172.20.0.1', false],
      ['example.dn42', '*.lab', 'AAAA', 'fd42::1', true],
      ['example.dn42', '_x', 'TXT', 'hi', true],
      ['example.dn42', '_a', 'MX', '10 ns1', false],
      ['example.dn42', 'm', 'MX', '10 mail_x', false],
      ['example.dn42', 'sub', 'NS', 'a_b.example.dn42.', false],
      ['example.dn42', '_sip._udp', 'SRV', '1 1 5060 ns1', true],
      ['example.dn42', '_sip._udp', 'SRV', '1 1 5060 a_b', false],
      ['example.dn42', 'x', 'PTR', 'a_b.example.dn42.', true],
      ['2.0.192.in-addr.arpa', '1', 'PTR', 'a_b.example.dn42.', false],
      ['2.0.192.in-addr.arpa', '53', 'CNAME', '53.0/26', true],
      ['0/26.2.0.192.in-addr.arpa', '1', 'PTR', 'router.example.dn42.', true],
      ['0/26.2.0.192.in-addr.arpa', '1', 'PTR', 'router', false],
      ['0/26.2.0.192.in-addr.arpa', 'x', 'A', '172.20.0.1', false],
    ];
    for (const [zone, name, type, content, loads] of cases) {
      const stored = checkRecordContent(type, content);
      const result = await checkZone(zone, [`${name} 300 IN ${type} ${stored}`]);
      expect(result.ok, `${zone}: ${name} ${type} ${stored}: ${result.output}`).to.equal(loads);
      expect(recordNameErrors(zone, { name, type, content: stored }), `${zone}: ${name} ${type} ${stored}`).to.have.length(loads ? 0 : 1);
    }
  });

  it('named-checkzone refuses what the CNAME rule refuses (the rule is not stricter than BIND)', async () => {
    const result = await checkZone('example.dn42', [line('www', 'A', '172.20.0.80'), line('www', 'CNAME', 'other')]);
    expect(result.ok).to.equal(false);
    expect(result.output).to.match(/CNAME and other data/);
  });
});
