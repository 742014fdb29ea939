import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { birdTime, parseBirdProtocols } from '../../../agent/telemetry/bird.js';
import { parseIpLinks } from '../../../agent/telemetry/links.js';
import { parseBirdRouteList, parseBirdRoutes } from '../../../agent/telemetry/routes.js';
import { protocolInfo } from '../../../agent/telemetry/snapshot.js';
import { parseWgDump } from '../../../agent/telemetry/wireguard.js';

/** Outputs captured from real programs on a Debian 12 node (bird 2.0.12, iproute2 6.1) and wg(8)'s dump format. */
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const local = (y: number, mo: number, d: number, h: number, mi: number, s: number, ms = 0) => new Date(y, mo - 1, d, h, mi, s, ms).toISOString();

describe('agent telemetry parsers', () => {
  describe('birdc show protocols all', () => {
    const now = new Date(2026, 10, 22, 16, 0, 0);

    it('keeps only the BGP protocols, in BIRD order, with state, neighbour, AS and route counts', () => {
      const protocols = parseBirdProtocols(fixture('bird-a-protocols-all.txt'), now);
      expect(protocols.map((p) => p.name)).to.deep.equal(['peer_b', 'peer_b6', 'dn42_down', 'dn42_off']);
      expect(protocols[0]).to.deep.equal({
        name: 'peer_b',
        state: 'established',
        proto_state: 'up',
        since: local(2026, 11, 22, 15, 37, 48, 636),
        info: 'Established',
        neighbor: '127.0.0.2',
        remote_asn: 4242420002,
        last_error: null,
        imported: 1,
        exported: 2,
        filtered: null,
        import_changes: 1,
        families: { ipv4: { imported: 1, exported: 2 }, ipv6: null },
      });
      expect(protocols[1]).to.include({ neighbor: '::1', imported: 2, exported: 1 });
      expect(protocols[1].families).to.deep.equal({ ipv4: null, ipv6: { imported: 2, exported: 1 } });
    });

    it('reads a connecting session as active (with its socket error) and a disabled one as down, without route counts', () => {
      const [, , connecting, disabled] = parseBirdProtocols(fixture('bird-a-protocols-all.txt'), now);
      expect(connecting).to.include({
        state: 'active',
        proto_state: 'start',
        info: 'Active; Socket: Connection refused',
        last_error: 'Socket: Connection refused',
        remote_asn: 4242420099,
        imported: null,
        exported: null,
      });
      expect(disabled).to.include({ state: 'down', proto_state: 'down', info: null, neighbor: '127.0.0.10', imported: null, import_changes: null });
      expect(connecting.import_changes).to.equal(null);
      // A channel that is down shows no routes: no per-family counts either.
      expect(connecting.families).to.deep.equal({ ipv4: null, ipv6: null });
      expect(disabled.families).to.deep.equal({ ipv4: null, ipv6: null });
    });

    it('counts the routes of an MP-BGP session per address family, from its two channels (extended next hop, bird 2.0.12)', () => {
      const [mp] = parseBirdProtocols(fixture('bird-c-protocols-all-mp.txt'), now);
      expect(mp).to.include({ name: 'mp_b', state: 'established', imported: 0, exported: 3 });
      expect(mp.families).to.deep.equal({ ipv4: { imported: 0, exported: 2 }, ipv6: { imported: 0, exported: 1 } });
    });

    it('reads iso long times and the filtered count of `import keep filtered`', () => {
      const protocols = parseBirdProtocols(fixture('bird-b-protocols-all-iso.txt'), now);
      expect(protocols.map((p) => p.name)).to.deep.equal(['peer_a', 'peer_a6']);
      expect(protocols[0]).to.include({ since: local(2026, 11, 22, 15, 37, 48), imported: 1, exported: 1, filtered: 1, remote_asn: 4242420001 });
      // Import changes: the accepted column only (the filtered update and the ignored withdrawal are not route changes)
      expect(protocols.map((p) => p.import_changes)).to.deep.equal([1, 1]);
    });

    it('puts the last error and the filtered routes into the snapshot info (the schema has no field for them)', () => {
      const [b] = parseBirdProtocols(fixture('bird-b-protocols-all-iso.txt'), now);
      expect(protocolInfo(b)).to.equal('Established; 1 filtered');
      expect(protocolInfo({ ...b, info: 'Active', last_error: 'Socket: Connection refused', filtered: 0 })).to.equal(
        'Active; last error: Socket: Connection refused',
      );
      expect(protocolInfo({ ...b, info: 'Error: Hold timer expired', last_error: 'Error: Hold timer expired', filtered: null })).to.equal(
        'Error: Hold timer expired',
      );
    });

    it('places a time of day later than now on the day before, and reads a bare date as local midnight', () => {
      expect(birdTime('23:59:00.500', now)).to.equal(local(2026, 11, 21, 23, 59, 0, 500));
      expect(birdTime('15:00:00', now)).to.equal(local(2026, 11, 22, 15, 0, 0));
      expect(birdTime('2026-10-01', now)).to.equal(local(2026, 10, 1, 0, 0, 0));
      expect(birdTime('yesterday', now)).to.equal(null);
    });

    it('finds nothing in output without protocols (BIRD down: birdc prints an error)', () => {
      expect(parseBirdProtocols('Unable to connect to server control socket (/run/bird/bird.ctl): No such file or directory\n')).to.deep.equal([]);
    });
  });

  describe('birdc show route all', () => {
    it('gives each best route with protocol, AS path and origin; routes without a path are local', () => {
      expect(parseBirdRoutes(fixture('bird-b-route-all.txt'))).to.deep.equal([
        { prefix: '172.21.0.0/24', protocol: 's4', origin_asn: null, as_path: [], rpki: null, local: true },
        { prefix: '172.20.1.0/24', protocol: 'peer_a', origin_asn: 4242420077, as_path: [4242420001, 4242420001, 4242420077], rpki: null, local: false },
        { prefix: 'fd42:1::/48', protocol: 'peer_a6', origin_asn: 4242420001, as_path: [4242420001], rpki: null, local: false },
        { prefix: 'fd42:3::/48', protocol: 's6', origin_asn: null, as_path: [], rpki: null, local: true },
        { prefix: 'fd42:2::/48', protocol: 's6', origin_asn: null, as_path: [], rpki: null, local: true },
      ]);
    });

    it('lists every route with its change time, kind and attribute lines (what the flap collector compares)', () => {
      const routes = parseBirdRouteList(fixture('bird-b-route-all.txt'));
      expect(routes.map((r) => [r.prefix, r.protocol, r.kind, r.stamp, r.best])).to.deep.equal([
        ['172.21.0.0/24', 's4', 'blackhole', '16:02:42.226', true],
        ['172.20.1.0/24', 'peer_a', 'unreachable', '16:02:52.547', true],
        ['fd42:1::/48', 'peer_a6', 'unreachable', '16:02:46.671', true],
        ['fd42:3::/48', 's6', 'blackhole', '16:02:42.226', true],
        ['fd42:2::/48', 's6', 'blackhole', '16:02:42.226', true],
      ]);
      expect(routes[1].attributes).to.deep.equal([
        'Type: BGP univ',
        'BGP.origin: IGP',
        'BGP.as_path: 4242420001 4242420001 4242420077',
        'BGP.next_hop: 127.0.0.1',
        'BGP.local_pref: 100',
      ]);
      expect(parseBirdRouteList('172.22.0.0/24        unicast [ebgp_b 2026-11-22 10:00:00 from fe80::2%dn42_b] (100) [AS4242420003i]')[0]).to.include({
        stamp: '2026-11-22 10:00:00',
        best: false,
        protocol: 'ebgp_b',
      });
    });

    it('skips alternative (not best) routes of a prefix and AS sets in a path', () => {
      const text = [
        'Table master4:',
        '172.22.0.0/24        unicast [ebgp_b 10:00:00.000 from fe80::2%dn42_b] (100) [AS4242420003i]',
        '	BGP.as_path: 4242420002 4242420003',
        '                     unicast [ebgp_c 09:00:00.000 from fe80::3%dn42_c] * (100) [AS4242420003i]',
        '	Type: BGP univ',
        '	BGP.as_path: 4242420004 {4242420005 4242420006} 4242420003',
      ].join('\n');
      expect(parseBirdRoutes(text)).to.deep.equal([
        { prefix: '172.22.0.0/24', protocol: 'ebgp_c', origin_asn: 4242420003, as_path: [4242420004, 4242420003], rpki: null, local: false },
      ]);
    });
  });

  describe('wg show all dump', () => {
    it('groups peers by interface, drops private and preshared keys, reads (none), 0 and off', () => {
      const interfaces = parseWgDump(fixture('wg-show-all-dump.txt'));
      expect(JSON.stringify(interfaces)).not.to.match(/EEu4Iyna|iAfPKrjm|U6XDO9u2/);
      expect(interfaces).to.deep.equal([
        {
          name: 'dn42_ams',
          public_key: 'AsONkIgj89uHmeBKdST/Uo49LJXafqbbH8Fjf0kiWyo=',
          listen_port: 51820,
          peers: [
            {
              public_key: 'ZKlpbW8MJzYf+IP4mAIVHFr8JXmKqAOH1o+KbPlBd0o=',
              endpoint: '198.51.100.7:51820',
              allowed_ips: ['0.0.0.0/0', '::/0'],
              latest_handshake_at: '2025-11-22T15:06:40.000Z',
              rx_bytes: 123456,
              tx_bytes: 654321,
              persistent_keepalive: 25,
            },
          ],
        },
        {
          name: 'int_fra2',
          public_key: 'URauAVLF75+TZ0M0bqMonwAKLyksfdPqtlwTq2cUGBQ=',
          listen_port: 52801,
          peers: [
            {
              public_key: 'ItrbwShDBDqIxKbM8ZCnBLvJhptEp9wxzwJwNojvGFw=',
              endpoint: '[2001:db8::7]:52801',
              allowed_ips: ['fd42:4242::/48'],
              latest_handshake_at: null,
              rx_bytes: 0,
              tx_bytes: 0,
              persistent_keepalive: null,
            },
            {
              public_key: '7vQSCfYYX/Cz+uCgIlFpds6lgFAy05cDko8I0kkONWs=',
              endpoint: null,
              allowed_ips: [],
              latest_handshake_at: null,
              rx_bytes: 0,
              tx_bytes: 0,
              persistent_keepalive: null,
            },
          ],
        },
      ]);
    });

    it('reads an empty dump (no WireGuard interfaces) as none', () => {
      expect(parseWgDump('')).to.deep.equal([]);
    });
  });

  describe('ip -j -s link', () => {
    it('reads name, state, MTU and byte counters; loopback (operstate UNKNOWN, UP, LOWER_UP) is up, a link without UP is down', () => {
      const links = parseIpLinks(fixture('ip-link.json'));
      expect(links.map((l) => l.name)).to.deep.equal(['lo', 'ifb0', 'ifb1', 'eth0']);
      expect(links[0]).to.deep.equal({ name: 'lo', up: true, mtu: 65536, rx_bytes: 174807, tx_bytes: 174807 });
      expect(links[1]).to.include({ name: 'ifb0', up: false, mtu: 1500 });
      expect(links[3]).to.include({ name: 'eth0', up: true, mtu: 1400 });
    });
  });
});
