import { expectStatus, type Client } from './http.js';
import { nodePublicIp } from './netns.js';
import { FLEET_ASN } from './registry.js';
import { LAB_MARK, labPaths, type LabNodeRecord } from './state.js';

/**
 * The fleet as an operator makes it through the admin API: N nodes of
 * AS4242423998 (the sample registry's EXAMPLE-FLEET) with loopbacks and
 * prefixes from the dn42 ranges, a full mesh of internal peerings (one
 * WireGuard link per pair, dialled over the lab internet, OSPF and iBGP over
 * them as the desired state renders it), the autopeering policy that opens
 * each node to the portal, and one node-bound enrollment token per node.
 */

/** At most 16 nodes: one /28 of 172.20.42.0/24 each, and the internal port pool (52800 to 52820) has a port per remote node. */
export const MAX_NODES = 16;
const SITES = ['fra', 'ams', 'lon', 'par', 'waw', 'nyc', 'sea', 'sin', 'tyo', 'syd', 'sao', 'jnb', 'ber', 'zrh', 'mad', 'hel'];
export const INTERNAL_PORT_BASE = 52800;

export function nodeRecord(stateDir: string, index: number): LabNodeRecord {
  const node_id = `n${index}`;
  const base = 16 * (index - 1);
  const dir = labPaths(stateDir).node(node_id);
  return {
    node_id,
    ns: `${LAB_MARK}-${node_id}`,
    index,
    public_ip: nodePublicIp(index),
    asn: FLEET_ASN,
    router_id: `172.20.42.${base + 1}`,
    loopback_ipv4: `172.20.42.${base + 1}`,
    loopback_ipv6: `fd42:4242:${index}::1`,
    ipv4_prefix: `172.20.42.${base}/28`,
    ipv6_prefix: `fd42:4242:${index}::/48`,
    dir,
    bird_socket: `${dir}/bird.ctl`,
    agent_config: `${dir}/agent.conf`,
  };
}

/** The node's own link-local address on its external (eBGP) links; a peer's portal default (fe80::<last four digits of its ASN>) never equals it. */
export const nodeLinkLocal = (index: number) => `fe80::3998:${index}`;

export async function createNode(admin: Client, n: LabNodeRecord): Promise<void> {
  expectStatus(
    await admin.post('/admin/nodes', {
      node_id: n.node_id,
      asn: n.asn,
      router_id: n.router_id,
      site: SITES[(n.index - 1) % SITES.length],
      loopback_ipv4: n.loopback_ipv4,
      loopback_ipv6: n.loopback_ipv6,
      link_local: nodeLinkLocal(n.index),
      ipv4_prefixes: [n.ipv4_prefix],
      ipv6_prefixes: [n.ipv6_prefix],
      inventory: { lab: true, namespace: n.ns },
    }),
    `create node ${n.node_id}`,
    201,
  );
}

/** The internal link from `a` to `b`: a peering of `a` with its WireGuard interface (listening on 52800 + b, dialling b on 52800 + a). */
export async function createInternalLink(admin: Client, a: LabNodeRecord, b: LabNodeRecord): Promise<void> {
  const name = `int-${b.node_id}`;
  expectStatus(
    await admin.put(`/admin/nodes/${a.node_id}/peerings/full`, {
      peering: { name, remote_asn: b.asn, remote_node_id: b.node_id, is_internal: true, notes: 'lab internal link' },
      interfaces: [
        {
          spec: {
            name,
            kind: 'wireguard',
            listen_port: INTERNAL_PORT_BASE + b.index,
            addresses: [`${a.loopback_ipv4}/32 peer ${b.loopback_ipv4}/32`, `fe80::${a.index}/64`],
            cost: 10,
            peer: { endpoint: `${b.public_ip}:${INTERNAL_PORT_BASE + a.index}`, persistent_keepalive_seconds: 15 },
          },
        },
      ],
      bgp_sessions: [],
    }),
    `internal link ${a.node_id} -> ${b.node_id}`,
    200,
  );
}

export async function openForAutopeering(admin: Client, n: LabNodeRecord): Promise<void> {
  expectStatus(
    await admin.put(`/admin/autopeering/nodes/${n.node_id}`, {
      enabled: true,
      endpoint_host: n.public_ip,
      max_sessions: 16,
      description: `lab node ${n.node_id} (${LAB_MARK})`,
    }),
    `autopeering policy of ${n.node_id}`,
    200,
  );
}

export async function enrollmentToken(admin: Client, n: LabNodeRecord): Promise<string> {
  const body = expectStatus(
    await admin.post('/admin/enrollment-tokens', { node_id: n.node_id, description: `${LAB_MARK} agent of ${n.node_id}` }),
    `enrollment token of ${n.node_id}`,
    201,
  );
  return (body as { secret: string }).secret;
}
