import type { DesiredState } from '../../../domain/desired-state/schema.js';
import { desired, key } from './support.js';

/**
 * Desired states the render specs share, each built through the real schema
 * (`desired`), so every default is the one a pulled document would have.
 */

export const identity = {
  node_id: 'fra1',
  asn: 4242420001,
  router_id: '172.20.0.1',
  site: 'fra',
  region: 41,
  loopback_ipv4: '172.20.0.1',
  loopback_ipv6: 'fd00:1::1',
  link_local: 'fe80::1',
  ipv4_prefixes: ['172.20.0.0/26'],
  ipv6_prefixes: ['fd00:1::/48'],
};

const emptyTopology = { internal_topology: { routers: [], hosts: [] } };

/** A node with nothing to run: identity only. */
export const standalone = (): DesiredState => desired({ node: identity, interfaces: [], bgp_sessions: [], bird: emptyTopology, dns: null });

/** The least a document may say: no loopbacks, prefixes, region or link-local. */
export const bare = (): DesiredState =>
  desired({ node: { node_id: 'bare1', asn: 4242420009, router_id: '172.20.9.1' }, interfaces: [], bgp_sessions: [], bird: emptyTopology });

const ebgpLink = (name: string, port: number, peerLetter: string, extra: object = {}) => ({
  name,
  addresses: [{ address: 'fe80::1/64', peer: 'fe80::2/128' }],
  listen_port: port,
  peer: { public_key: key(peerLetter), endpoint: `192.0.2.${port - 51800}:51820`, persistent_keepalive_seconds: 25 },
  ...extra,
});

/** Every form of eBGP session the renderer knows. */
export const sessions = (): DesiredState =>
  desired({
    node: identity,
    interfaces: [
      ebgpLink('wg42', 51801, 'B'),
      ebgpLink('dn42-peer2', 51802, 'C', { mtu: 1280 }),
      ebgpLink('wg43', 51803, 'D', {
        addresses: [
          { address: '172.20.0.1/32', peer: '172.20.16.1/32' },
          { address: 'fd00:1::1/128', peer: 'fd42:4242:3::1/128' },
        ],
      }),
      ebgpLink('wg44', 51804, 'E', {
        peer: { public_key: key('E'), endpoint: '[2001:db8::44]:51820', preshared_key_ref: 'as44', allowed_ips: ['fe80::/64', '172.20.16.9'] },
      }),
      { name: 'wg-dialin', listen_port: 51805, addresses: [{ address: 'fe80::1/64', peer: null }], peer: { public_key: key('F') } },
      { name: 'wg-nokey', listen_port: 51806 },
    ],
    bgp_sessions: [
      {
        name: 'peer_mp',
        remote_asn: 4242420002,
        neighbor: 'fe80::2',
        interface: 'wg42',
        address_family: 'mp-bgp',
        extended_next_hop: true,
        link_latency: 3,
        bandwidth: 24,
        crypto: 34,
      },
      {
        name: 'peer2',
        remote_asn: 4242420022,
        neighbor: 'fe80::2',
        interface: 'dn42-peer2',
        address_family: 'mp-bgp',
        extended_next_hop: true,
        bfd: true,
        import_limit: 20000,
      },
      {
        name: 'peer3_v4',
        remote_asn: 4242420003,
        neighbor: '172.20.16.1',
        interface: 'wg43',
        address_family: 'ipv4',
        local_pref: 120,
        import_limit: 1000,
        import_limit_action: 'restart',
        link_latency: 5,
      },
      {
        name: 'peer3_v6',
        remote_asn: 4242420003,
        neighbor: 'fd42:4242:3::1',
        interface: 'wg43',
        source_address: 'fd00:1::1',
        address_family: 'ipv6',
        import_limit_action: 'disable',
      },
      { name: 'peer4', remote_asn: 4242420044, neighbor: 'fe80::2', interface: 'wg44', address_family: 'ipv6', import_limit_action: 'warn', local_pref: 90 },
      { name: 'grc', remote_asn: 4242422602, neighbor: 'fd42:4242:2601:ac12::1', address_family: 'mp-bgp', extended_next_hop: true, policy: 'route_collector' },
      { name: 'grc_ll', remote_asn: 4242422602, neighbor: 'fe80::2', interface: 'wg42', address_family: 'ipv6', policy: 'route_collector' },
      { name: 'import', remote_asn: 4242420050, neighbor: '172.20.16.5', address_family: 'ipv4' },
      { name: `p${'x'.repeat(63)}`, remote_asn: 4242420051, neighbor: '172.20.16.6', address_family: 'ipv4' },
    ],
    bird: emptyTopology,
    dns: null,
  });

/** Routing policy: blocked prefixes (both families), cold potato, route_local_pref, custom import prefixes. */
export const policy = (): DesiredState =>
  desired({
    node: identity,
    interfaces: [ebgpLink('wg42', 51801, 'B')],
    bgp_sessions: [
      {
        name: 'peer_mp',
        remote_asn: 4242420002,
        neighbor: 'fe80::2',
        interface: 'wg42',
        address_family: 'mp-bgp',
        extended_next_hop: true,
        link_latency: 3,
        local_pref: 150,
      },
    ],
    bird: {
      ...emptyTopology,
      cold_potato_med: 50,
      route_local_pref: [
        { prefix: '172.22.0.0/16', local_pref: 200 },
        { prefix: '172.22.128.0/17', local_pref: 10 },
        { prefix: 'fd42:1000::/20', local_pref: 300 },
      ],
      blocked_prefixes: ['172.23.5.0/24', 'fd42:dead::/48'],
    },
    dns: null,
  });

const zone = (name: string, records: object[], extra: object = {}) => ({
  zone: name,
  primary_ns: 'ns1.example.dn42',
  admin_email: 'host.master@example.dn42',
  soa_serial: 2026112201,
  soa_refresh: 7200,
  soa_retry: 3600,
  soa_expire: 1209600,
  soa_minimum: 300,
  default_ttl: 3600,
  records,
  ...extra,
});

/** A DNS group share: forwards, a forward zone and authoritative zones, RFC 2317 included. */
export const dns = (): DesiredState =>
  desired({
    node: identity,
    interfaces: [],
    bgp_sessions: [],
    bird: emptyTopology,
    dns: {
      group_id: 7,
      group_name: 'anycast-ns',
      bind_addresses: ['172.20.0.53', 'fd00:1::53'],
      cache_ttl_seconds: 300,
      forwards: [
        { zone: 'dn42', upstreams: ['172.20.0.53', 'fd42:d42:d42:54::1'] },
        { zone: '20.172.in-addr.arpa', upstreams: ['172.20.0.53'] },
      ],
      zones: [
        zone('example.dn42', [
          { name: 'ns1', type: 'A', content: '172.20.0.53', ttl: null },
          { name: 'ns1', type: 'AAAA', content: 'fd00:1::53', ttl: null },
          { name: '@', type: 'TXT', content: '"v=spf1 -all"', ttl: 60 },
          { name: '@', type: 'MX', content: '10 mail.example.dn42.', ttl: null },
          { name: 'mail', type: 'A', content: '172.20.0.25', ttl: 600 },
          { name: 'www', type: 'CNAME', content: 'ns1', ttl: null },
          { name: '_sip._udp', type: 'SRV', content: '10 5 5060 ns1.example.dn42.', ttl: null },
          { name: '@', type: 'CAA', content: '0 issue "ca.dn42"', ttl: null },
          { name: '*.lab', type: 'A', content: '172.20.0.40', ttl: null },
        ]),
        zone(
          '0/26.0.20.172.in-addr.arpa',
          [
            { name: '@', type: 'NS', content: 'ns1.example.dn42.', ttl: null },
            { name: '1', type: 'PTR', content: 'fra1.example.dn42.', ttl: null },
            { name: '53', type: 'PTR', content: 'ns1.example.dn42.', ttl: 86400 },
          ],
          { admin_email: 'hostmaster@example.dn42' },
        ),
        zone('0-26.0.20.172.in-addr.arpa', [{ name: '2', type: 'PTR', content: 'ber1.example.dn42.', ttl: null }]),
      ],
    },
  });

/** A DNS share that listens everywhere (no bind addresses), on IPv4 only, or forwards nothing. */
export const dnsWith = (fields: object): DesiredState => {
  const doc = dns();
  return desired({ ...doc, dns: { ...doc.dns, ...fields } });
};
