import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { peerConfig, PeerConfigError, peerInterfaceName, PRIVATE_KEY_PLACEHOLDER, type PeerConfigRequest } from '../../../domain/autopeering/peer-config.js';
import { checkBirdSnippet, checkWireguardSnippet, wgGenkey, wgPubkey } from '../../support/peer-config-check.js';

const lines = (text: string) => text.split('\n').map((l) => l.trim());

describe('peer-side configuration of a portal peering (WireGuard and BIRD 2)', () => {
  let ourKey: string;
  before(async () => {
    ourKey = await wgPubkey(await wgGenkey());
  });

  const request = (over: Partial<PeerConfigRequest>): PeerConfigRequest => ({
    asn: 4242421234,
    form: 'link-local-mp',
    link_local: 'fe80::1234',
    peer_ipv4: null,
    peer_ipv6: null,
    node_id: 'fra1',
    provision: {
      endpoint: '192.0.2.10:20001',
      node_public_key: ourKey,
      node_link_local: 'fe80::a',
      node_asn: 4242420001,
      mtu: 1400,
      node_ipv4: '172.20.0.1',
      node_ipv6: 'fd42:1::1',
    },
    ...over,
  });

  it('link-local multiprotocol: one session to our link-local on the interface, both channels, extended next hop; both files pass the real tools', async function () {
    this.timeout(30_000);
    const c = peerConfig(request({}));
    expect(c).to.include({ form: 'link-local-mp', interface_name: 'dn42_0001' });
    expect(c.protocol_names).to.deep.equal(['dn42_0001']);
    const wg = lines(c.wireguard);
    expect(wg).to.include.members([
      '[Interface]',
      `PrivateKey = ${PRIVATE_KEY_PLACEHOLDER}`,
      'ListenPort = <your listen port>',
      'MTU = 1400',
      'Table = off',
      'PostUp = ip address add dev %i fe80::1234/64',
      '[Peer]',
      `PublicKey = ${ourKey}`,
      'Endpoint = 192.0.2.10:20001',
      'AllowedIPs = 10.0.0.0/8, 172.20.0.0/14, 172.31.0.0/16, fd00::/8, fe80::/10',
      'PersistentKeepalive = 25',
    ]);
    expect(wg.filter((l) => l.startsWith('PostUp'))).to.have.length(1);
    const bird = lines(c.bird);
    expect(bird).to.include.members(['protocol bgp dn42_0001 {', 'local as 4242421234;', 'neighbor fe80::a%dn42_0001 as 4242420001;', 'extended next hop on;']);
    expect(c.bird).to.match(/ipv4 \{\n\s+extended next hop on;\n\s+import limit 8500 action block;/);
    expect(c.bird).to.match(/ipv6 \{\n\s+import limit 8500 action block;\n\s+import where net ~ \[ fd00::\/8\{44,64\} \];/);
    expect(c.bird).to.include('172.20.0.0/14{21,29}');

    const parsed = await checkBirdSnippet(c.bird);
    expect(parsed).to.include('router id');
    const { stripped } = await checkWireguardSnippet(c.wireguard);
    expect(lines(stripped)).to.include.members([`PublicKey = ${ourKey}`, 'Endpoint = 192.0.2.10:20001', 'ListenPort = 51820']);
    expect(stripped).not.to.match(/^(MTU|Table|PostUp)\b/m);
  });

  it('ULA single session: our ULA as neighbour from the peer ULA, point-to-point /128, both channels with extended next hop', async function () {
    this.timeout(30_000);
    const c = peerConfig(request({ form: 'ula-mp', peer_ipv6: 'fd42:1234::1', provision: { ...request({}).provision!, endpoint: '[2001:db8::10]:20002' } }));
    expect(c.protocol_names).to.deep.equal(['dn42_0001']);
    expect(lines(c.wireguard)).to.include.members([
      'PostUp = ip address add dev %i fe80::1234/64',
      'PostUp = ip address add dev %i fd42:1234::1/128 peer fd42:1::1/128',
      'Endpoint = [2001:db8::10]:20002',
      `PublicKey = ${ourKey}`,
    ]);
    expect(lines(c.bird)).to.include.members([
      'protocol bgp dn42_0001 {',
      'local fd42:1234::1 as 4242421234;',
      'neighbor fd42:1::1 as 4242420001;',
      'interface "dn42_0001";',
      'extended next hop on;',
    ]);
    await checkBirdSnippet(c.bird);
    await checkWireguardSnippet(c.wireguard);
  });

  it('two plain sessions: one protocol per family between the point-to-point tunnel addresses, no extended next hop', async function () {
    this.timeout(30_000);
    const c = peerConfig(request({ form: 'dual-plain', peer_ipv4: '172.22.1.1', peer_ipv6: 'fd42:1234::1' }));
    expect(c.protocol_names).to.deep.equal(['dn42_0001_v4', 'dn42_0001_v6']);
    expect(lines(c.wireguard)).to.include.members([
      'PostUp = ip address add dev %i 172.22.1.1/32 peer 172.20.0.1/32',
      'PostUp = ip address add dev %i fd42:1234::1/128 peer fd42:1::1/128',
    ]);
    const bird = lines(c.bird);
    expect(bird).to.include.members([
      'protocol bgp dn42_0001_v4 {',
      'local 172.22.1.1 as 4242421234;',
      'neighbor 172.20.0.1 as 4242420001;',
      'protocol bgp dn42_0001_v6 {',
      'local fd42:1234::1 as 4242421234;',
      'neighbor fd42:1::1 as 4242420001;',
    ]);
    expect(c.bird).not.to.include('extended next hop');
    expect(c.bird.match(/^\s+ipv4 \{/gm)).to.have.length(1);
    expect(c.bird.match(/^\s+ipv6 \{/gm)).to.have.length(1);
    await checkBirdSnippet(c.bird);
    await checkWireguardSnippet(c.wireguard);
  });

  it('a node without dial-in leaves Endpoint out (our node dials the peer), and the file still parses', async function () {
    this.timeout(30_000);
    const c = peerConfig(request({ provision: { ...request({}).provision!, endpoint: null } }));
    expect(c.wireguard).not.to.match(/^Endpoint/m);
    expect(c.wireguard).to.include('# our node has no dial-in endpoint');
    await checkWireguardSnippet(c.wireguard);
  });

  it('the checkers refuse broken snippets with the tools’ own output', async function () {
    this.timeout(30_000);
    const c = peerConfig(request({}));
    await checkBirdSnippet(c.bird.replace('neighbor fe80::a%dn42_0001', 'neighbour fe80::a')).then(
      () => expect.fail('bird accepted a broken snippet'),
      (err: Error) => expect(err.message).to.match(/bird -p refused the snippet.*syntax error/s),
    );
    await checkWireguardSnippet(c.wireguard.replace(`PublicKey = ${ourKey}`, 'PublicKey = not-a-key')).then(
      () => expect.fail('wg accepted a broken file'),
      (err: Error) => expect(err.message).to.match(/wg setconf refused the file.*Key is not the correct length or format/s),
    );
  });

  it('names the facts it misses instead of making a half configuration; the interface name keeps to 15 characters', () => {
    expect(() =>
      peerConfig(
        request({ form: 'dual-plain', peer_ipv4: '172.22.1.1', peer_ipv6: 'fd42:1234::1', provision: { ...request({}).provision!, node_ipv4: null } }),
      ),
    )
      .to.throw(PeerConfigError)
      .with.property('message', "cannot make the configuration: missing our node's IPv4 tunnel address");
    expect(() => peerConfig(request({ provision: { ...request({}).provision!, node_public_key: null } }))).to.throw("missing our node's WireGuard public key");
    expect(() => peerConfig(request({ form: null }))).to.throw(PeerConfigError, 'fits none of the portal session forms');
    // Our ULA given as an option when the provision block has none.
    const c = peerConfig(request({ form: 'ula-mp', peer_ipv6: 'fd42:1234::1', provision: { ...request({}).provision!, node_ipv6: undefined } }), {
      node_ipv6: 'fd42:1::9',
    });
    expect(c.bird).to.include('neighbor fd42:1::9 as 4242420001;');
    expect(peerInterfaceName(4242420001)).to.equal('dn42_0001');
    expect(peerInterfaceName(4201270001)).to.equal('dn42_4201270001');
    expect(peerInterfaceName(4294967295)).to.have.length.at.most(15);
  });

  it('is browser-safe: no node: import', async () => {
    const source = await readFile(new URL('../../../domain/autopeering/peer-config.ts', import.meta.url), 'utf8');
    expect(source).not.to.match(/from ['"]node:/);
    expect(source.match(/^import .*$/gm)).to.deep.equal(["import type { SessionForm } from './request.js';"]);
  });
});
