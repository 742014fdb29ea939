import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { checkRecordContent, type RecordType } from '../../../domain/dns/records.js';

const run = promisify(execFile);

/**
 * What the control server stores is what BIND reads: every record in its stored
 * form, written as one zone-file line, must load with the real `named-checkzone`
 * (BIND 9), including in an RFC 2317 classless zone.
 */
async function checkZone(origin: string, lines: string[]): Promise<{ ok: boolean; output: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'dns-spec-'));
  try {
    const file = join(dir, 'zone');
    const head = [`$ORIGIN ${origin}.`, '$TTL 3600', `@ IN SOA ns1.${origin}. hostmaster.${origin}. 1 3600 900 604800 300`, `@ IN NS ns1.${origin}.`, `ns1 IN A 172.20.0.53`];
    await writeFile(file, [...head, ...lines, ''].join('\n'));
    try {
      const { stdout, stderr } = await run('named-checkzone', ['-i', 'local', origin, file]);
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

  it('named-checkzone refuses what the CNAME rule refuses (the rule is not stricter than BIND)', async () => {
    const result = await checkZone('example.dn42', [line('www', 'A', '172.20.0.80'), line('www', 'CNAME', 'other')]);
    expect(result.ok).to.equal(false);
    expect(result.output).to.match(/CNAME and other data/);
  });
});
