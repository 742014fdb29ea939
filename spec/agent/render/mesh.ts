import { materialise } from '../../../domain/desired-state/materialise.js';
import type { DesiredState } from '../../../domain/desired-state/schema.js';
import type { InterfaceRecord, PeeringRecord, SessionRecord } from '../../../domain/node/events.js';
import { wireguardPublicKey } from '../../../agent/render/index.js';
import { context, facts, liveNode } from '../../domain/desired-state/fixtures.js';
import { desired, key, PRIVATE_KEYS } from './support.js';

/**
 * A three-node fleet made the way the control server makes it: node records
 * (internal peerings, interfaces, sessions, base template) through the
 * server's `materialise()`. fra1 and ber1 have both loopbacks, ams1 only an
 * IPv6 one, so iBGP with ams1 runs over IPv6 only. fra1 also has an eBGP
 * peering, a disabled session and hosts.
 */

export const MESH = ['fra1', 'ber1', 'ams1'] as const;
export type MeshNode = (typeof MESH)[number];

const index = (n: MeshNode) => MESH.indexOf(n) + 1;
const loopback4 = (n: MeshNode) => (n === 'ams1' ? null : `172.20.0.${index(n)}`);
const loopback6 = (n: MeshNode) => `fd00:1::${index(n)}`;
const others = (n: MeshNode) => MESH.filter((m) => m !== n);

function internalLinks(n: MeshNode): { peerings: PeeringRecord[]; interfaces: InterfaceRecord[] } {
  const peerings: PeeringRecord[] = [];
  const interfaces: InterfaceRecord[] = [];
  others(n).forEach((m, i) => {
    const id = i + 1;
    peerings.push({ id, name: `int-${m}`, remote_asn: 4242420001, remote_node_id: m, remote_label: null, is_internal: true, enabled: true, notes: null });
    const v4 = loopback4(n) && loopback4(m) ? [`${loopback4(n)}/32 peer ${loopback4(m)}/32`] : [];
    interfaces.push({
      id,
      peering_id: id,
      enabled: true,
      sort_order: 0,
      spec: {
        name: `int-${m}`,
        kind: 'wireguard',
        listen_port: 52800 + index(m),
        addresses: [...v4, `fe80::${index(n)}/64`],
        cost: 10 * (index(n) + index(m)),
        peer: { endpoint: `192.0.2.${index(m)}:${52800 + index(n)}` },
      },
    });
  });
  return { peerings, interfaces };
}

/** fra1's external side: one eBGP peering with its interface and two sessions, one of them disabled. */
function externalLinks(): { peerings: PeeringRecord[]; interfaces: InterfaceRecord[]; sessions: SessionRecord[] } {
  return {
    peerings: [{ id: 10, name: 'as42', remote_asn: 4242420042, remote_node_id: null, remote_label: 'AS42', is_internal: false, enabled: true, notes: null }],
    interfaces: [
      {
        id: 10,
        peering_id: 10,
        enabled: true,
        sort_order: 5,
        spec: {
          name: 'dn42-as42',
          kind: 'wireguard',
          listen_port: 51842,
          peer_link_local: 'fe80::42',
          peer: { public_key: key('K'), endpoint: '198.51.100.42:51801', persistent_keepalive_seconds: 25 },
        },
      },
    ],
    sessions: [
      {
        id: 10,
        peering_id: 10,
        sort_order: 0,
        spec: { name: 'as42', remote_asn: 4242420042, neighbor_address: 'fe80::42%dn42-as42', link_latency: 2, bandwidth: 24, crypto: 34 },
      },
      { id: 11, peering_id: 10, sort_order: 1, spec: { name: 'as42_old', remote_asn: 4242420042, neighbor_address: '172.20.42.1', enabled: false } },
    ],
  };
}

/** The desired state the control server would publish for `n`. */
export function meshState(n: MeshNode): DesiredState {
  const internal = internalLinks(n);
  const external = n === 'fra1' ? externalLinks() : { peerings: [], interfaces: [], sessions: [] };
  const node = liveNode(
    {
      asn: 4242420001,
      router_id: `172.20.0.${index(n)}`,
      site: n.slice(0, 3),
      loopback_ipv4: loopback4(n) ?? undefined,
      loopback_ipv6: loopback6(n),
      link_local: `fe80::${index(n)}`,
      ipv4_prefixes: ['172.20.0.0/26'],
      ipv6_prefixes: ['fd00:1::/48'],
      labels: { region: n === 'ams1' ? 42 : 41 },
      base_template:
        n === 'fra1'
          ? { bird: { cold_potato_med: 50, internal_topology: { hosts: [{ name: 'web', addresses: ['172.20.0.20/32', 'fd00:1::20'], interface: 'br-svc' }] } } }
          : {},
    },
    { peerings: [...internal.peerings, ...external.peerings], interfaces: [...internal.interfaces, ...external.interfaces], sessions: external.sessions },
  );
  const fleetFacts = others(n).map((m) =>
    facts(m, {
      router_id: `172.20.0.${index(m)}`,
      loopback_ipv4: loopback4(m),
      loopback_ipv6: loopback6(m),
      wireguard_public_key: wireguardPublicKey(PRIVATE_KEYS[m]),
    }),
  );
  const inbound = others(n).map((m) => ({ node_id: m, peering_id: MESH.indexOf(n) + 1, name: `int-${n}`, enabled: true }));
  return desired(materialise({ ...node, node_id: n }, context(fleetFacts, { inbound })));
}
