import { join } from 'node:path';
import { expect } from 'chai';
import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { dnsServiceWanted, renderAll, RenderError, type RenderedFile } from '../../../agent/render/index.js';
import { rname, zoneFileName } from '../../../agent/render/dns/names.js';
import { dns, dnsWith, standalone } from './cases.js';
import { PRIVATE_KEYS, renderedInTempDir, run } from './support.js';

const render = (state: DesiredState, renderedDir = '/r'): RenderedFile[] =>
  renderAll({ state, wireguardPrivateKey: PRIVATE_KEYS.fra1, renderedDir }).filter((f) => f.path.startsWith('dns/'));
const content = (files: RenderedFile[], path: string) => (files.find((f) => f.path === path) ?? expect.fail(`no ${path}`)).content;
const namedConf = (state: DesiredState) => content(render(state), 'dns/named.conf');

describe('agent render: DNS (BIND 9)', () => {
  it('renders named.conf and one zone file per zone, RFC 2317 slashes as %2F', () => {
    expect(render(dns()).map((f) => f.path)).to.deep.equal([
      'dns/named.conf',
      'dns/zones/0%2F26.0.20.172.in-addr.arpa.zone',
      'dns/zones/0-26.0.20.172.in-addr.arpa.zone',
      'dns/zones/example.dn42.zone',
    ]);
    expect(zoneFileName('0/26.0.20.172.in-addr.arpa')).not.to.equal(zoneFileName('0-26.0.20.172.in-addr.arpa'));
  });

  it('renders nothing without a DNS group, and says the service should be off', () => {
    expect(render(standalone())).to.deep.equal([]);
    expect(dnsServiceWanted(standalone())).to.equal(false);
    expect(dnsServiceWanted(dns())).to.equal(true);
  });

  describe('named.conf', () => {
    const conf = namedConf(dns());

    it('listens on the bind addresses, recurses for dn42 clients, caps the cache TTL', () => {
      expect(conf).to.include('\tlisten-on { 172.20.0.53; };\n\tlisten-on-v6 { fd00:1::53; };\n');
      expect(conf).to.include('acl dn42-clients { localhost; localnets; 10.0.0.0/8; 172.20.0.0/14; 172.31.0.0/16; fd00::/8; };');
      expect(conf).to.include('\trecursion yes;\n\tallow-recursion { dn42-clients; };');
      expect(conf).to.include('\tmax-cache-ttl 300;');
    });

    it('forward zones forward only to their upstreams, outside DNSSEC validation', () => {
      expect(conf).to.include('zone "dn42" {\n\ttype forward;\n\tforward only;\n\tforwarders { 172.20.0.53; fd42:d42:d42:54::1; };\n};');
      expect(conf).to.include('\tvalidate-except { "dn42"; "20.172.in-addr.arpa"; };');
    });

    it('serves each zone as primary from its file under the rendered dir', () => {
      const withDir = content(render(dns(), '/var/lib/dn42-control/nodes/fra1/rendered'), 'dns/named.conf');
      expect(withDir).to.include(
        'zone "0/26.0.20.172.in-addr.arpa" {\n\ttype primary;\n\tfile "/var/lib/dn42-control/nodes/fra1/rendered/dns/zones/0%2F26.0.20.172.in-addr.arpa.zone";\n\tnotify no;\n};',
      );
    });

    it('keeps BIND’s default listeners without bind addresses, and closes a family without one', () => {
      expect(namedConf(dnsWith({ bind_addresses: [] }))).not.to.include('listen-on');
      expect(namedConf(dnsWith({ bind_addresses: ['172.20.0.53'] }))).to.include('listen-on { 172.20.0.53; };\n\tlisten-on-v6 { none; };');
      expect(namedConf(dnsWith({ forwards: [], cache_ttl_seconds: 0 })))
        .to.include('max-cache-ttl 0;')
        .and.not.include('validate-except');
    });
  });

  describe('zone files', () => {
    const zone = content(render(dns()), 'dns/zones/example.dn42.zone');
    const rfc2317 = content(render(dns()), 'dns/zones/0%2F26.0.20.172.in-addr.arpa.zone');

    it('start with $ORIGIN, $TTL and the SOA from the soa_* fields, dots of the mailbox escaped', () => {
      expect(zone).to.include(
        '$ORIGIN example.dn42.\n$TTL 3600\n@\t3600\tIN\tSOA\tns1.example.dn42. host\\.master.example.dn42. (\n\t\t2026112201 ; serial\n\t\t7200 ; refresh\n\t\t3600 ; retry\n\t\t1209600 ; expire\n\t\t300 ; minimum',
      );
      expect(rname('hostmaster@example.dn42')).to.equal('hostmaster.example.dn42.');
      expect(() => rname('a@b c')).to.throw(RenderError, /invalid admin_email/);
    });

    it('write relative names and each record’s TTL, the zone default when it has none', () => {
      expect(zone).to.include('ns1\t3600\tIN\tA\t172.20.0.53\n');
      expect(zone).to.include('@\t60\tIN\tTXT\t"v=spf1 -all"\n');
      expect(zone).to.include('mail\t600\tIN\tA\t172.20.0.25\n');
      expect(zone).to.include('*.lab\t3600\tIN\tA\t172.20.0.40\n');
      expect(rfc2317).to.include('$ORIGIN 0/26.0.20.172.in-addr.arpa.\n');
      expect(rfc2317).to.include('53\t86400\tIN\tPTR\tns1.example.dn42.\n');
    });

    it('add an apex NS for primary_ns only when the zone has none', () => {
      expect(zone).to.include('@\t3600\tIN\tNS\tns1.example.dn42.\n');
      expect(rfc2317.match(/\tNS\t/g)).to.have.length(1);
    });

    it('refuse record content with a line break, which could write further lines', () => {
      const state = dns();
      state.dns!.zones[0].records.push({ name: 'x', type: 'TXT', content: '"a"\n$INCLUDE /etc/shadow', ttl: null });
      expect(() => render(state)).to.throw(RenderError, /invalid content of TXT record 'x' in zone example.dn42/);
    });
  });

  describe('accepted by the real BIND tools', () => {
    const cases: Record<string, () => DesiredState> = {
      'forwards and zones': dns,
      'no bind addresses': () => dnsWith({ bind_addresses: [] }),
      'IPv4 only, no forwards': () => dnsWith({ bind_addresses: ['172.20.0.53'], forwards: [] }),
      'forwards only': () => dnsWith({ zones: [] }),
    };
    for (const [name, make] of Object.entries(cases)) {
      it(`named-checkconf -z: ${name}`, () =>
        renderedInTempDir({ state: make(), wireguardPrivateKey: PRIVATE_KEYS.fra1 }, async (dir) => {
          const r = await run('named-checkconf', ['-z', join(dir, 'dns/named.conf')]);
          expect(r, r.stdout + r.stderr).to.include({ code: 0 });
        }));
    }

    it('named-checkzone for every zone file', () =>
      renderedInTempDir({ state: dns(), wireguardPrivateKey: PRIVATE_KEYS.fra1 }, async (dir) => {
        for (const z of dns().dns!.zones) {
          const r = await run('named-checkzone', [z.zone, join(dir, 'dns/zones', zoneFileName(z.zone))]);
          expect(r, r.stdout + r.stderr).to.include({ code: 0 });
          expect(r.stdout).to.include(`zone ${z.zone}/IN: loaded serial ${z.soa_serial}`);
        }
      }));

    it('invents no address for an in-zone name server: a document without one is refused by named-checkconf -z in BIND’s words', () => {
      // The server adds these (domain/dns/name-servers.ts); an older or hand-written document may lack them.
      const state = dns();
      const example = state.dns!.zones[0];
      example.records = example.records.filter((r) => r.name !== 'ns1' && r.name !== 'www');
      return renderedInTempDir({ state, wireguardPrivateKey: PRIVATE_KEYS.fra1 }, async (dir, files) => {
        expect(content(files, 'dns/zones/example.dn42.zone')).not.to.match(/^ns1\t/m);
        const r = await run('named-checkconf', ['-z', join(dir, 'dns/named.conf')]);
        expect(r.code).to.equal(1);
        expect(r.stdout).to.include("zone example.dn42/IN: NS 'ns1.example.dn42' has no address records (A or AAAA)");
      });
    });

    it('the checks fail on a broken zone (they can fail)', () => {
      const state = dns();
      state.dns!.zones[0].records.push({ name: 'www', type: 'A', content: '172.20.0.80', ttl: null });
      return renderedInTempDir({ state, wireguardPrivateKey: PRIVATE_KEYS.fra1 }, async (dir) => {
        const r = await run('named-checkzone', ['example.dn42', join(dir, 'dns/zones/example.dn42.zone')]);
        expect(r.code).to.equal(1);
        expect(r.stdout).to.match(/CNAME and other data/);
      });
    });
  });
});
