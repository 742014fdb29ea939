import { expect } from 'chai';
import { capacityOf, defaultLinkLocal, isHostPort, lowestFreePort, planProvision, portalNames, validateCreate } from '../../../domain/autopeering/create.js';
import { DEFAULT_AUTOPEERING_POLICY } from '../../../domain/autopeering/policy.js';
import { displayedOf, formOf, liveOf } from '../../../domain/autopeering/view.js';
import type { LiveNode } from '../../../domain/node/state.js';
import { Conflict, Validation } from '../../../domain/errors.js';

const KEY = 'wQzQn6qN5m0y0VZ8mY0aQkqf1mN0s2m0oQv0a8m0aE0=';

/** The portal's view of one link-local multiprotocol peering `autopeer_1` on interface `dn42_1` of node n. */
const oneMultiprotocolSession = () =>
  displayedOf(null, {
    node_id: 'n',
    name: 'autopeer_1',
    notes: null,
    interfaces: [{ name: 'dn42_1', spec: { name: 'dn42_1', listen_port: 51800, peer_link_local: 'fe80::1', peer: { public_key: KEY } } }],
    sessions: [{ name: 'autopeer_1', spec: { name: 'autopeer_1', remote_asn: 1, neighbor_address: 'fe80::1', address_family: 'mp-bgp' } }],
  });

const IDLE_METRICS = { cpu: 0, rss: 0, total_failures: 0, log_warning_count: 0, log_error_count: 0, last_error_at: null, last_error_message: null };
const holder = (ports: number[], range?: string) => ({
  fields: range ? { base_template: { runtime: { wireguard_port_range: range } } } : {},
  interfaces: ports.map((listen_port) => ({ spec: { listen_port } })),
});

describe('autopeering: request rules', () => {
  it('derives the default link-local address from the last four digits of the ASN', () => {
    expect(defaultLinkLocal(4242421234)).to.equal('fe80::1234');
    expect(defaultLinkLocal(4242420010)).to.equal('fe80::10');
    expect(defaultLinkLocal(64512)).to.equal('fe80::4512');
    expect(defaultLinkLocal(7)).to.equal('fe80::7');
  });

  it('accepts host:port with a DNS name, a dotted IPv4 or a bracketed IPv6 only', () => {
    for (const ok of ['peer.example.net:51820', '192.0.2.1:1', '[2001:db8::1]:65535', 'localhost:51820']) expect(isHostPort(ok), ok).to.equal(true);
    for (const bad of [
      'peer.example.net',
      'peer.example.net:0',
      'peer.example.net:65536',
      '2001:db8::1:51820',
      '[192.0.2.1]:5',
      '1.2.3:51820',
      'a b:1',
      ':51820',
    ]) {
      expect(isHostPort(bad), bad).to.equal(false);
    }
  });

  it('decides the form and applies the defaults', () => {
    expect(validateCreate({ node_id: 'n', public_key: KEY }, 4242420010)).to.deep.equal({
      node_id: 'n',
      form: 'link-local-mp',
      requested: {
        public_key: KEY,
        endpoint: null,
        link_local: 'fe80::10',
        mtu: 1420,
        mp_bgp: true,
        session_addressing: 'link-local',
        peer_ipv4: null,
        peer_ipv6: null,
        extended_next_hop: true,
        notes: null,
      },
    });
    expect(validateCreate({ node_id: 'n', public_key: KEY, session_addressing: 'ipv6-ula', peer_ipv6: 'FD42:10:0::2' }, 1).form).to.equal('ula-mp');
    const plain = validateCreate(
      { node_id: 'n', public_key: KEY, mp_bgp: false, session_addressing: 'ipv6-ula', peer_ipv4: '172.20.10.2', peer_ipv6: 'fd42:10::2' },
      1,
    );
    expect([plain.form, plain.requested.peer_ipv6, plain.requested.extended_next_hop]).to.deep.equal(['dual-plain', 'fd42:10::2', false]);
  });

  it('refuses a ULA peer outside fd00::/8 also for two plain sessions', () => {
    expect(() => validateCreate({ node_id: 'n', public_key: KEY, mp_bgp: false, peer_ipv4: '172.20.10.2', peer_ipv6: 'fc00::1' }, 1)).to.throw(
      Validation,
      'peer_ipv6 fc00::1 is outside fd00::/8',
    );
  });

  it('counts seats: ports held in the pool (others ignored), the cap on provisioned requests, the lowest free port', () => {
    const node = holder([51800, 51802, 52800]);
    expect(capacityOf(node, DEFAULT_AUTOPEERING_POLICY, 0)).to.deep.equal({
      capacity: 31,
      used_ports: 2,
      free_ports: 29,
      remaining: 29,
      provisioned: 0,
      max_sessions: null,
    });
    expect(capacityOf(node, { ...DEFAULT_AUTOPEERING_POLICY, max_sessions: 3 }, 2)).to.deep.include({ remaining: 1 });
    expect(capacityOf(node, { ...DEFAULT_AUTOPEERING_POLICY, max_sessions: 1 }, 2)).to.deep.include({ remaining: 0 });
    expect(lowestFreePort(node)).to.equal(51801);
    expect(lowestFreePort(holder([40000], '40000-40000'))).to.equal(undefined);
  });

  it('names the records after the AS, sessions as the contract says', () => {
    expect(portalNames(4242420010, 'dual-plain')).to.deep.equal({
      peering: 'autopeer_4242420010',
      interface: 'dn42_4242420010',
      sessions: ['autopeer_4242420010_v4', 'autopeer_4242420010_v6'],
    });
    expect(portalNames(4242420010, 'link-local-mp').sessions).to.deep.equal(['autopeer_4242420010']);
  });

  it('tells the form of a peering from its sessions, null when it fits none', () => {
    const s = (neighbor_address: string, address_family?: 'ipv4' | 'ipv6' | 'mp-bgp') => ({
      spec: { name: 'x', remote_asn: 1, neighbor_address, address_family },
    });
    expect(formOf([s('fe80::10%dn42_1')])).to.equal('link-local-mp');
    expect(formOf([s('fd42::2', 'mp-bgp')])).to.equal('ula-mp');
    expect(formOf([s('172.20.0.1'), s('fd42::2')])).to.equal('dual-plain');
    expect(formOf([s('172.20.0.1')])).to.equal(null);
    expect(formOf([])).to.equal(null);
  });

  it('refuses a link-local address another interface of the node names in its addresses (409)', () => {
    const node = {
      node_id: 'n',
      lifecycle: 'active',
      autopeering: { ...DEFAULT_AUTOPEERING_POLICY, enabled: true },
      fields: { asn: 4242420001, router_id: '172.20.0.1', link_local: 'fe80::1' },
      peerings: [],
      sessions: [],
      interfaces: [{ id: 1, peering_id: null, enabled: true, sort_order: 0, spec: { name: 'wg_x', addresses: ['fe80::1/64 peer fe80::10/128'] } }],
    } as unknown as LiveNode;
    const request = validateCreate({ node_id: 'n', public_key: KEY }, 4242420010);
    expect(() => planProvision(node, 'n', 4242420010, 0, request)).to.throw(Conflict, "link_local fe80::10 is already used by interface 'wg_x' on node n");
    expect(planProvision(node, 'n', 4242420011, 0, validateCreate({ node_id: 'n', public_key: KEY }, 4242420011)).provision.listen_port).to.equal(51800);
  });

  it('live for one multiprotocol session: no sessions array, per-family routes unknown, seconds established up to the snapshot', () => {
    const shown = oneMultiprotocolSession();
    const live = liveOf(
      {
        node_id: 'n',
        captured_at: '2026-11-01T12:00:00Z',
        containers: [],
        interfaces: [],
        wireguard_interfaces: [{ name: 'dn42_1', peers: [{ public_key: KEY, rx_bytes: 1, tx_bytes: 2 }] }],
        bgp_protocols: [{ name: "'autopeer_1'", state: 'established', since: '2026-11-01T11:00:00Z', routes_imported: 7 }],
        self_metrics: IDLE_METRICS,
      },
      shown,
    );
    expect(live).to.deep.equal({
      bgp_state: 'established',
      bgp_health: 'up',
      since: '2026-11-01T11:00:00Z',
      observed_at: '2026-11-01T12:00:00.000Z',
      established_seconds: 3600,
      wireguard: { latest_handshake_at: null, rx_bytes: 1, tx_bytes: 2 },
      routes: { ipv4: null, ipv6: null },
      sessions: null,
    });
    expect(liveOf(null, shown)).to.equal(null);
  });

  it("live for one multiprotocol session from an agent reporting per-family counts: each family's channel imported and exported", () => {
    const shown = oneMultiprotocolSession();
    const live = liveOf(
      {
        node_id: 'n',
        captured_at: '2026-11-01T12:00:00Z',
        containers: [],
        interfaces: [],
        wireguard_interfaces: [],
        bgp_protocols: [
          {
            name: 'autopeer_1',
            state: 'established',
            routes_imported: 7,
            routes_exported: 5,
            routes_imported_v4: 3,
            routes_exported_v4: 2,
            routes_imported_v6: 4,
            routes_exported_v6: 3,
          },
        ],
        self_metrics: IDLE_METRICS,
      },
      shown,
    );
    expect(live?.routes).to.deep.equal({ ipv4: { imported: 3, exported: 2 }, ipv6: { imported: 4, exported: 3 } });
  });

  it('live finds the session under the protocol name the agent renders and reports (ebgp_<session>), as a real node lists it', () => {
    const shown = oneMultiprotocolSession();
    const live = liveOf(
      {
        node_id: 'n',
        captured_at: '2026-11-01T12:00:00Z',
        containers: [],
        interfaces: [],
        wireguard_interfaces: [],
        bgp_protocols: [
          { name: 'ebgp_autopeer_10', state: 'idle' },
          { name: 'ebgp_autopeer_1', state: 'established', since: '2026-11-01T11:59:00Z', routes_imported_v4: 3, routes_exported_v4: 2 },
        ],
        self_metrics: IDLE_METRICS,
      },
      shown,
    );
    expect(live).to.deep.include({ bgp_state: 'established', bgp_health: 'up', established_seconds: 60 });
    expect(live?.routes.ipv4).to.deep.equal({ imported: 3, exported: 2 });
  });
});
