import { join } from 'node:path';
import { expect } from 'chai';
import { bgpProtocolName, renderAll, type RenderedFile } from '../../agent/render/index.js';
import { zonePath } from '../../agent/render/dns/index.js';
import { validateDesiredState, type DesiredState } from '../../domain/desired-state/schema.js';
import { bgp, node, startFleet, wg, type FleetHarness } from '../http/control/fleet/support.js';
import { expectBirdAccepts, inTempDir, PRIVATE_KEYS, run, writeRendered } from '../agent/render/support.js';

/**
 * The server's DNS and mitigation output through the agent's renderer and the
 * real daemons' checkers: a node built only through the admin API (a DNS group
 * with zones and records, a TXT longer than one string, an RFC 2317 zone, one
 * zone left to the server's SOA defaults, a prefix block, a peer-disable), its
 * published desired state rendered by `renderAll` and handed to `bird -p`,
 * `named-checkconf -z` and `named-checkzone`.
 */

const BLOCKED_AS = 4242420002;
const OTHER_AS = 4242420003;
const LONG_TEXT = `v=DKIM1; k=rsa; p=${'A'.repeat(300)}`;

describe('integration: DNS group and flap mitigations through the agent renderer', function () {
  this.timeout(60_000);
  let h: FleetHarness;
  beforeEach(async () => {
    h = await startFleet();
  });
  afterEach(() => h.close());

  const ok = async <T>(pending: Promise<{ status: number; text: string; body: T }>, status = 200): Promise<T> => {
    const res = await pending;
    expect(res.status, res.text).to.equal(status);
    return res.body;
  };

  /** fra1 with two eBGP peers (one to be disabled), in a DNS group, with a block on both families. */
  async function buildNode(): Promise<DesiredState> {
    const c = h.client;
    await ok(c.post('/admin/nodes', node('fra1', { labels: { region: 41 } })), 201);
    for (const [name, asn, port, neighbor] of [
      ['dn42_blocked', BLOCKED_AS, 51801, 'fe80::2'],
      ['dn42_other', OTHER_AS, 51802, 'fe80::3'],
    ] as const) {
      await ok(
        c.post('/admin/nodes/fra1/peerings/provision', {
          peering: { name, remote_asn: asn },
          interface_spec: wg(name, port, { peer_link_local: neighbor }),
          bgp_specs: [bgp(name, asn, { interface: name, neighbor_address: neighbor })],
        }),
        201,
      );
    }

    const group = await ok<{ id: number }>(
      c.post('/admin/dns-groups', {
        name: 'anycast',
        bind_addresses: ['172.20.0.53', 'fd42:4242:1::53'],
        forwards: [{ zone: 'dn42', upstreams: ['172.20.0.53'] }],
      }),
      201,
    );
    const zone = async (body: Record<string, unknown>) =>
      (await ok<{ zone: { id: number } }>(c.post(`/admin/dns-groups/${group.id}/zones`, body), 201)).zone.id;
    const records = async (zoneId: number, list: Record<string, unknown>[]) => {
      for (const r of list) await ok(c.post(`/admin/dns-groups/${group.id}/zones/${zoneId}/records`, r), 201);
    };
    const example = await zone({ zone: 'Example.DN42.', admin_email: 'host.master@example.dn42' });
    await records(example, [
      { name: 'ns1', type: 'A', content: '172.20.0.53' },
      { name: 'ns1', type: 'AAAA', content: 'fd42:4242:1::53' },
      { name: '@', type: 'TXT', content: 'v=spf1 -all', ttl: 60 },
      { name: 'dkim._domainkey', type: 'TXT', content: LONG_TEXT },
      { name: '@', type: 'MX', content: '10 mail' },
      { name: 'mail', type: 'A', content: '172.20.0.25', ttl: 600 },
      { name: 'www', type: 'CNAME', content: 'ns1' },
      { name: '_sip._udp', type: 'SRV', content: '10 5 5060 ns1.example.dn42.' },
      { name: '@', type: 'CAA', content: '0 issue "ca.dn42"' },
      { name: 'off', type: 'A', content: '172.20.0.99', enabled: false },
    ]);
    // RFC 2317 classless delegation: the child zone, and its parent pointing into it with CNAMEs.
    const classless = await zone({ zone: '0/26.0.20.172.in-addr.arpa', primary_ns: 'ns1.example.dn42', admin_email: 'hostmaster@example.dn42' });
    await records(classless, [
      { name: '@', type: 'NS', content: 'ns1.example.dn42.' },
      { name: '1', type: 'PTR', content: 'fra1.example.dn42.' },
      { name: '53', type: 'PTR', content: 'ns1.example.dn42.' },
    ]);
    const parent = await zone({ zone: '0.20.172.in-addr.arpa', primary_ns: 'ns1.example.dn42', admin_email: 'hostmaster@example.dn42' });
    await records(parent, [
      { name: '0/26', type: 'NS', content: 'ns1.example.dn42.' },
      { name: '53', type: 'CNAME', content: '53.0/26' },
    ]);
    // SOA names left to the server's defaults: `ns1.<zone>` lies inside the zone, so BIND wants its address.
    await records(await zone({ zone: 'defaults.dn42' }), [
      { name: 'ns1', type: 'A', content: '172.20.0.53' },
      { name: 'www', type: 'A', content: '172.20.0.80' },
    ]);
    // An RFC 2317 zone left to the defaults: SOA names under its host-name part (no slash), outside the zone.
    await records(await zone({ zone: '64/26.0.20.172.in-addr.arpa' }), [{ name: '65', type: 'PTR', content: 'fra1.example.dn42.' }]);

    await ok(c.put('/admin/nodes/fra1/dns-group', { dns_group_id: group.id }));
    await ok(c.post('/admin/fleet/mitigations/prefix-block', { prefix: '172.23.5.7/24' }));
    await ok(c.post('/admin/fleet/mitigations/prefix-block', { prefix: 'FD42:DEAD:0::/48', nodes: ['fra1'] }));
    const disabled = await ok<{ changed: Record<string, number> }>(c.post('/admin/fleet/mitigations/peer-disable', { asn: BLOCKED_AS }));
    expect(Object.keys(disabled.changed)).to.deep.equal(['fra1']);

    const published = await ok<{ state: DesiredState }>(c.get('/admin/nodes/fra1/desired-state'));
    expect(validateDesiredState(published.state)).to.deep.equal({ ok: true });
    return published.state;
  }

  const file = (files: RenderedFile[], path: string) =>
    (files.find((f) => f.path === path) ?? expect.fail(`no ${path} in ${files.map((f) => f.path)}`)).content;

  it('renders a document BIRD and BIND accept, with the block as an exact-match reject and the disabled peer without a protocol', async () => {
    const state = await buildNode();
    expect(state.bird.blocked_prefixes).to.deep.equal(['172.23.5.0/24', 'fd42:dead::/48']);
    expect(state.bgp_sessions.map((s) => s.name)).to.deep.equal(['dn42_other']);
    expect(state.interfaces.map((i) => i.name)).to.deep.equal(['dn42_blocked', 'dn42_other']);
    expect(state.dns!.zones.find((z) => z.zone === '64/26.0.20.172.in-addr.arpa')).to.include({
      primary_ns: 'ns1.0.20.172.in-addr.arpa',
      admin_email: 'hostmaster@0.20.172.in-addr.arpa',
    });

    await inTempDir(async (dir) => {
      const files = renderAll({ state, wireguardPrivateKey: PRIVATE_KEYS.fra1, renderedDir: dir });
      await writeRendered(dir, files);

      await expectBirdAccepts(join(dir, 'bird/bird.conf'));
      const filters = file(files, 'bird/filters.conf');
      // Exact match: plain set members, no `+`, `-` or `{a,b}` range that would catch more-specifics.
      expect(filters).to.include('define BLOCKED_V4 = [ 172.23.5.0/24 ];');
      expect(filters).to.include('define BLOCKED_V6 = [ fd42:dead::/48 ];');
      // Inside the eBGP import check, which the remaining peer's import filter runs.
      expect(filters).to.match(/function dn42_import_ok_v4\(\) \{[^}]*\n\s*if net ~ BLOCKED_V4 then return false;\n/);
      expect(filters).to.match(/function dn42_import_ok_v6\(\) \{[^}]*\n\s*if net ~ BLOCKED_V6 then return false;\n/);
      expect(filters).to.match(/filter ebgp_dn42_other_import_v6 \{\n\s*if !dn42_import_ok_v6\(\) then reject;/);
      const ebgp = file(files, 'bird/ebgp.conf');
      expect(ebgp).to.include(`protocol bgp ${bgpProtocolName({ name: 'dn42_other' })} `);
      expect(ebgp).not.to.include(bgpProtocolName({ name: 'dn42_blocked' }));
      expect(ebgp).not.to.include(String(BLOCKED_AS));
      // The tunnel stays.
      expect(files.map((f) => f.path)).to.include.members(['wireguard/dn42_blocked.conf', 'wireguard/dn42_other.conf']);

      const conf = await run('named-checkconf', ['-z', join(dir, 'dns/named.conf')]);
      expect(conf, conf.stdout + conf.stderr).to.include({ code: 0 });
      for (const z of state.dns!.zones) {
        const r = await run('named-checkzone', [z.zone, join(dir, zonePath(z.zone))]);
        expect(r, `${z.zone}: ${r.stdout}${r.stderr}`).to.include({ code: 0 });
        expect(r.stdout).to.include(`zone ${z.zone}/IN: loaded serial ${z.soa_serial}`);
      }
      const example = file(files, zonePath('example.dn42'));
      expect(example).to.include('@\t60\tIN\tTXT\t"v=spf1 -all"\n');
      expect(example).to.match(/^dkim\._domainkey\t3600\tIN\tTXT\t"v=DKIM1; k=rsa; p=A+" "A+"$/m);
      expect(example).not.to.include('172.20.0.99');
    });
  });
});
