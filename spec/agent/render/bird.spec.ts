import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { bgpProtocolName, renderAll, RenderError, type RenderedFile } from '../../../agent/render/index.js';
import { bare, dns, policy, sessions, standalone } from './cases.js';
import { MESH, meshState } from './mesh.js';
import { desired, expectBirdAccepts, PRIVATE_KEYS, PSK, renderedInTempDir, run } from './support.js';

const inputs = (state: DesiredState, kernel?: boolean) => ({ state, wireguardPrivateKey: PRIVATE_KEYS.fra1, presharedKeys: { as44: PSK }, kernel });
const birdText = (state: DesiredState, kernel?: boolean): string =>
  renderAll({ ...inputs(state, kernel), renderedDir: '/r' })
    .filter((f) => f.path.startsWith('bird/'))
    .map((f) => f.content)
    .join('\n');
const birdFile = (state: DesiredState, name: string): string =>
  renderAll({ ...inputs(state), renderedDir: '/r' }).find((f) => f.path === `bird/${name}`)!.content;
/** The text of one `protocol ... <name> { ... }` block. */
const protocol = (text: string, name: string): string => {
  const m = new RegExp(`^protocol \\w+(?: v[23])? ${name.replace(/[.'-]/g, (c) => `\\${c}`)} \\{\\n[\\s\\S]*?^\\}$`, 'm').exec(text);
  return m ? m[0] : expect.fail(`no protocol ${name}`);
};
const protocolNames = (text: string) => [...text.matchAll(/^protocol \w+(?: v[23])? (\S+) \{/gm)].map((m) => m[1]);

describe('agent render: BIRD 2', () => {
  describe('accepted by the real bird -p', () => {
    const noIpv6Imports = () => desired({ ...policy(), bird: { ...policy().bird, import_prefixes: { ipv4: ['172.20.0.0/14{21,29}'], ipv6: [] } } });
    const cases: Record<string, () => DesiredState> = {
      standalone,
      bare,
      sessions,
      policy,
      'policy without IPv6 import prefixes': noIpv6Imports,
      dns,
      ...Object.fromEntries(MESH.map((n) => [`mesh ${n}`, () => meshState(n)])),
    };
    for (const [name, make] of Object.entries(cases)) {
      for (const kernel of [true, false]) {
        it(`${name}, kernel protocol ${kernel ? 'on' : 'off'}`, () =>
          renderedInTempDir(inputs(make(), kernel), async (dir, files) => {
            expect(files.filter((f) => f.path.startsWith('bird/')).map((f) => f.path)).to.deep.equal([
              'bird/bird.conf',
              'bird/ebgp.conf',
              'bird/filters.conf',
              'bird/internal.conf',
              'bird/roa_v4.conf',
              'bird/roa_v6.conf',
            ]);
            await expectBirdAccepts(join(dir, 'bird/bird.conf'));
          }));
      }
    }

    it('fails on a broken file (the check above can fail)', () =>
      renderedInTempDir(inputs(sessions()), async (dir, files: RenderedFile[]) => {
        const ebgp = files.find((f) => f.path === 'bird/ebgp.conf')!;
        await writeFile(join(dir, ebgp.path), ebgp.content.replace('protocol bgp ebgp_import', 'protocol bgp import'));
        const r = await run('bird', ['-p', '-c', join(dir, 'bird/bird.conf')]);
        expect(r.code).to.equal(1);
        expect(r.stderr).to.match(/ebgp\.conf:\d+:\d+ syntax error/);
      }));

    it('refuses a relative rendered dir (includes must be absolute)', () => {
      expect(() => renderAll({ ...inputs(standalone()), renderedDir: 'rendered' })).to.throw(RenderError, /must be absolute/);
    });
  });

  describe('sessions', () => {
    const text = birdText(sessions());

    it('renders one protocol per session, named ebgp_<name>, whatever the name', () => {
      const ebgp = protocolNames(text).filter((n) => n.startsWith('ebgp_'));
      expect(ebgp).to.deep.equal(sessions().bgp_sessions.map(bgpProtocolName));
      expect(ebgp).to.include('ebgp_import');
      const long = ebgp.find((n) => n.startsWith('ebgp_pxxx'))!;
      expect(long).to.have.length(64);
      expect(long).to.match(/^ebgp_px+_[0-9a-f]{8}$/);
    });

    it('mp-bgp over link-local: one protocol, fe80::x%iface, both channels, extended next hop on IPv4 only', () => {
      const p = protocol(text, 'ebgp_peer_mp');
      expect(p).to.include('neighbor fe80::2%wg42 as 4242420002;');
      expect(p).to.match(/ipv4 \{\n\t\textended next hop on;\n\t\timport filter ebgp_peer_mp_import_v4;\n\t\timport limit 8500 action block;/);
      expect(p).to.match(/ipv6 \{\n\t\timport filter ebgp_peer_mp_import_v6;/);
      expect(p.match(/extended next hop/g)).to.have.length(1);
    });

    it('names the interface on its own line where BIRD cannot read it after %', () => {
      const p = protocol(text, 'ebgp_peer2');
      expect(p).to.include('neighbor fe80::2 as 4242420022;\n\tinterface "dn42-peer2";');
      expect(p).to.include('import limit 20000 action block;');
    });

    it('separate v4 and v6 sessions: one channel each, with their import limit actions and source address', () => {
      const v4 = protocol(text, 'ebgp_peer3_v4');
      expect(v4).to.include('neighbor 172.20.16.1 as 4242420003;\n\tinterface "wg43";');
      expect(v4).to.include('import limit 1000 action restart;');
      expect(v4).not.to.include('ipv6');
      const v6 = protocol(text, 'ebgp_peer3_v6');
      expect(v6).to.include('source address fd00:1::1;');
      expect(v6).to.include('import limit 8500 action disable;');
      expect(v6).not.to.match(/ipv4|extended/);
      expect(protocol(text, 'ebgp_peer4')).to.include('import limit 8500 action warn;');
    });

    it('route collectors: nothing imported, our routes exported, multihop unless on an interface', () => {
      const grc = protocol(text, 'ebgp_grc');
      expect(grc).to.include('multihop;');
      expect(grc.match(/import none;/g)).to.have.length(2);
      expect(grc).not.to.include('import limit');
      expect(grc).to.include('export filter ebgp_grc_export_v4;');
      const ll = protocol(text, 'ebgp_grc_ll');
      expect(ll).to.include('neighbor fe80::2%wg42 as 4242422602;');
      expect(ll).not.to.include('multihop');
      expect(text).not.to.include('filter ebgp_grc_import');
    });

    it('bfd: bfd on in the session and one protocol bfd for the node', () => {
      expect(protocol(text, 'ebgp_peer2')).to.include('bfd on;');
      expect(protocol(text, 'ebgp_peer_mp')).not.to.include('bfd');
      expect(protocol(text, 'bfd1')).to.equal('protocol bfd bfd1 {\n}');
      expect(birdText(policy())).not.to.include('bfd');
    });

    it('local_pref and link communities in the session filters, communities on export too', () => {
      const filters = birdFile(sessions(), 'filters.conf');
      expect(filters).to.include(
        'filter ebgp_peer3_v4_import_v4 {\n\tif !dn42_import_ok_v4() then reject;\n\tdn42_latency(5);\n\tbgp_local_pref = 120;\n\taccept;\n}',
      );
      expect(filters).to.include(
        'filter ebgp_peer_mp_export_v6 {\n\tif !dn42_export_ok_v6() then reject;\n\tdn42_latency(3);\n\tdn42_bandwidth(24);\n\tdn42_crypto(34);\n\taccept;\n}',
      );
      expect(filters).to.include('filter ebgp_grc_export_v6 {\n\tif !dn42_export_ok_v6() then reject;\n\taccept;\n}');
    });
  });

  describe('policy', () => {
    const filters = birdFile(policy(), 'filters.conf');

    it('rejects blocked_prefixes on eBGP import by exact match, per family', () => {
      expect(filters).to.include('define BLOCKED_V4 = [ 172.23.5.0/24 ];');
      expect(filters).to.include('define BLOCKED_V6 = [ fd42:dead::/48 ];');
      expect(filters).to.match(/function dn42_import_ok_v4\(\) \{[^}]*if net ~ BLOCKED_V4 then return false;/);
      expect(birdFile(sessions(), 'filters.conf')).not.to.include('BLOCKED_');
    });

    it('rejects our own prefixes and routes outside the dn42 ranges, and long AS paths', () => {
      expect(filters).to.include('define OWN_NETS_V4 = [ 172.20.0.0/26+ ];');
      expect(filters).to.include('define DN42_IMPORT_V6 = [ fd00::/8{44,64} ];');
      expect(filters).to.match(/if !\(net ~ DN42_IMPORT_V4\) then return false;\n\tif net ~ OWN_NETS_V4 then return false;/);
      expect(filters).to.include('if bgp_path.len > DN42_AS_PATH_MAX then return false;');
    });

    it('applies cold potato and route_local_pref only when configured', () => {
      expect(filters).to.include('define COLD_POTATO_MED = 50;');
      expect(filters).to.include(
        'function dn42_route_local_pref_v6() {\n\tif net ~ [ fd42:1000::/20+ ] then { bgp_local_pref = 300; return true; }\n\treturn false;\n}',
      );
      expect(protocol(birdText(policy()), 'ebgp_peer_mp')).to.include('med metric on;');
      const plain = birdText(sessions());
      expect(plain).not.to.match(/COLD_POTATO|route_local_pref|med metric/);
    });

    it('accepts nothing of a family whose import_prefixes are empty (BIRD has no empty set)', () => {
      const state = desired({ ...policy(), bird: { ...policy().bird, import_prefixes: { ipv4: ['172.20.0.0/14{21,29}'], ipv6: [] } } });
      const text = birdFile(state, 'filters.conf');
      expect(text).not.to.include('DN42_IMPORT_V6');
      expect(text).to.match(/function dn42_import_ok_v6\(\) \{\n\treturn false;/);
      expect(text).to.include('define DN42_IMPORT_V4 = [ 172.20.0.0/14{21,29} ];');
    });

    it('RPKI is rendered by the mode of bird.rpki (bird-rpki.spec.ts); off renders none of it', () => {
      expect(birdText(desired({ ...policy(), bird: { ...policy().bird, rpki: { mode: 'off' } } }))).not.to.match(/roa[46_]|roa_check/);
    });
  });

  describe('node protocols', () => {
    it('originates the own prefixes as unreachable statics stamped with the region community', () => {
      const main = birdFile(standalone(), 'bird.conf');
      expect(protocol(main, 'own_v4')).to.include('bgp_community.add((64511, 41));');
      expect(protocol(main, 'own_v4')).to.include('route 172.20.0.0/26 unreachable;');
      expect(protocol(main, 'own_v6')).to.include('route fd00:1::/48 unreachable;');
      expect(main).to.include('router id 172.20.0.1;');
    });

    it('kernel protocols per family with the loopback as source, or none at all', () => {
      const main = birdFile(standalone(), 'bird.conf');
      expect(protocol(main, 'kernel_v4')).to.include('krt_prefsrc = OWN_IPV4;');
      expect(protocol(main, 'kernel_v6')).to.include('krt_prefsrc = OWN_IPV6;');
      expect(birdText(standalone(), false)).not.to.include('protocol kernel');
      expect(birdText(bare())).not.to.match(/krt_prefsrc|OWN_NETS|protocol static (?!roa_)/);
    });

    it('a standalone node has no BGP, OSPF or statics for hosts (the ROA statics are there)', () => {
      const names = protocolNames(birdText(standalone()));
      expect(names).to.deep.equal(['device1', 'direct1', 'kernel_v4', 'kernel_v6', 'own_v4', 'own_v6', 'roa_v4', 'roa_v6']);
    });
  });

  describe('three-node mesh (materialised by the server)', () => {
    const texts = Object.fromEntries(MESH.map((n) => [n, birdText(meshState(n))])) as Record<(typeof MESH)[number], string>;

    it('iBGP per family where both ends have a loopback of it', () => {
      expect(protocolNames(texts.fra1).filter((n) => n.startsWith('ibgp_'))).to.deep.equal(['ibgp_ams1_v6', 'ibgp_ber1_v4', 'ibgp_ber1_v6']);
      expect(protocolNames(texts.ams1).filter((n) => n.startsWith('ibgp_'))).to.deep.equal(['ibgp_ber1_v6', 'ibgp_fra1_v6']);
    });

    it('each side of an iBGP session names the other side’s loopback, with next hop self for eBGP routes', () => {
      const fraToBer = protocol(texts.fra1, 'ibgp_ber1_v4');
      const berToFra = protocol(texts.ber1, 'ibgp_fra1_v4');
      expect(fraToBer).to.include('local 172.20.0.1 as OWN_AS;\n\tneighbor 172.20.0.2 as 4242420001;');
      expect(berToFra).to.include('local 172.20.0.2 as OWN_AS;\n\tneighbor 172.20.0.1 as 4242420001;');
      expect(protocol(texts.ams1, 'ibgp_fra1_v6')).to.include('local fd00:1::3 as OWN_AS;\n\tneighbor fd00:1::1 as 4242420001;');
      expect(fraToBer).to.include('next hop self ebgp;');
    });

    it('OSPFv2 and v3 in area 0 over the internal links, point to point, the same cost on both ends', () => {
      for (const v of ['ospf_v4', 'ospf_v6']) {
        expect(protocol(texts.fra1, v)).to.include('interface "int-ber1" {\n\t\t\ttype ptp;\n\t\t\tcost 30;');
        expect(protocol(texts.ber1, v)).to.include('interface "int-fra1" {\n\t\t\ttype ptp;\n\t\t\tcost 30;');
        expect(protocol(texts.fra1, v)).to.include('interface "int-ams1" {\n\t\t\ttype ptp;\n\t\t\tcost 40;');
      }
      expect(texts.fra1).to.include('protocol ospf v2 ospf_v4 {');
      expect(texts.fra1).to.include('protocol ospf v3 ospf_v6 {');
    });

    it('hosts become static routes over their interface', () => {
      expect(protocol(texts.fra1, 'hosts_v4')).to.include('route 172.20.0.20/32 via "br-svc"; # web');
      expect(protocol(texts.fra1, 'hosts_v6')).to.include('route fd00:1::20/128 via "br-svc"; # web');
      expect(texts.ber1).not.to.include('hosts_v4 {');
    });

    it('the enabled eBGP session only: a disabled session is absent', () => {
      expect(protocolNames(texts.fra1).filter((n) => n.startsWith('ebgp_'))).to.deep.equal(['ebgp_as42']);
      expect(protocol(texts.fra1, 'ebgp_as42')).to.include('neighbor fe80::42 as 4242420042;\n\tinterface "dn42-as42";');
      expect(texts.fra1).not.to.include('as42_old');
    });
  });

  it('gives node ids with - or . an apostrophed iBGP name, and anything else a hashed one, which BIRD accepts', async () => {
    const state = meshState('fra1');
    state.bird.internal_topology.routers = [
      { node_id: 'de-fra.2', asn: 4242420001, router_id: '172.20.0.5', loopback_ipv4: '172.20.0.5', loopback_ipv6: null },
      { node_id: 'odd id/1', asn: 4242420001, router_id: '172.20.0.6', loopback_ipv4: '172.20.0.6', loopback_ipv6: null },
    ];
    const names = protocolNames(birdText(state)).filter((n) => n.includes('ibgp_'));
    expect(names[0]).to.equal("'ibgp_de-fra.2_v4'");
    expect(names[1]).to.match(/^ibgp_odd_id_1_[0-9a-f]{8}_v4$/);
    await renderedInTempDir(inputs(state), (dir) => expectBirdAccepts(join(dir, 'bird/bird.conf')));
  });

  it('writes include paths under the rendered dir it is given', () => {
    const main = renderAll({ ...inputs(standalone()), renderedDir: '/var/lib/dn42-control/nodes/fra1/rendered' }).find(
      (f) => f.path === 'bird/bird.conf',
    )!.content;
    expect(main).to.include('include "/var/lib/dn42-control/nodes/fra1/rendered/bird/filters.conf";');
    expect(main).to.include('include "/var/lib/dn42-control/nodes/fra1/rendered/bird/ebgp.conf";');
    expect(() => renderAll({ ...inputs(standalone()), renderedDir: '/tmp/a"b' })).to.throw(RenderError);
  });
});
