import type { SessionForm } from './request.js';

/**
 * The configuration a peer puts on its side of a portal peering: a wg-quick
 * file and a BIRD 2 snippet, from what the portal API answers for a request
 * (the row's form and the peer's own addresses, its `provision` block with our
 * endpoint, key, link-local and ASN). Pure and browser-safe: the portal page
 * bundles it and shows the texts ready to copy.
 *
 * dn42 conventions (the reference): `Table = off` with the addresses set by
 * `PostUp` (`ip address add ... peer ...` has no `Address =` form), a
 * link-local `/64` on every tunnel, `/32` and `/128` point-to-point tunnel
 * addresses, AllowedIPs covering the dn42, private and link-local ranges; one
 * BGP protocol over the link-local with both channels and extended next hop,
 * or one per family. The BIRD snippet is self-contained (no template or
 * function of the peer's config is named), with the dn42 import prefix filters
 * and `import limit 8500 action block`.
 */

/** What the portal answers in a request's `provision` block (document 3), plus our tunnel addresses when it gives them. */
export interface ProvisionFacts {
  /** Dial-in `host:port` of our node; null when the node cannot be dialled in (the peer's endpoint is dialled instead). */
  endpoint: string | null;
  node_public_key: string | null;
  /** Our link-local address (no prefix length, no zone). */
  node_link_local: string | null;
  node_asn: number;
  mtu: number;
  /** Our IPv4 tunnel address (the node's loopback), needed by the two plain sessions. */
  node_ipv4?: string | null;
  /** Our IPv6 tunnel address (the node's ULA loopback), needed by the ULA and the two plain sessions. */
  node_ipv6?: string | null;
}

/** The request fields the generator reads: a portal request row (`GET /autopeering/requests/{id}` or the 201 of the POST) fits as it is. */
export interface PeerConfigRequest {
  /** The peer's ASN (the row's `asn`). */
  asn: number;
  form: SessionForm | null;
  /** The peer's link-local address as provisioned. */
  link_local: string | null;
  peer_ipv4: string | null;
  peer_ipv6: string | null;
  node_id?: string;
  provision: ProvisionFacts | null;
}

export interface PeerConfigOptions {
  /** Our IPv4 tunnel address when the `provision` block does not carry it. */
  node_ipv4?: string | null;
  /** Our IPv6 (ULA) tunnel address when the `provision` block does not carry it. */
  node_ipv6?: string | null;
  /** The peer's interface name; default `dn42_<our ASN, short>` (see {@link peerInterfaceName}). */
  interface_name?: string;
}

export interface PeerConfig {
  form: SessionForm;
  /** The interface name the snippets use (the wg-quick file is `<interface_name>.conf`). */
  interface_name: string;
  /** BIRD protocol names of the snippet, one per session. */
  protocol_names: string[];
  /** wg-quick file; `<your private key>` and `<your listen port>` are for the peer to fill. */
  wireguard: string;
  /** BIRD 2 protocols, self-contained. */
  bird: string;
}

/** Placeholders of the WireGuard file the peer replaces. */
export const PRIVATE_KEY_PLACEHOLDER = '<your private key>';
export const LISTEN_PORT_PLACEHOLDER = '<your listen port>';

/** A request the generator cannot make a configuration for (missing provision facts); the message says what is missing. */
export class PeerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PeerConfigError';
  }
}

/** dn42 import prefix filters (the reference). */
export const DN42_IPV4_FILTER = [
  '172.20.0.0/14{21,29}',
  '172.20.0.0/24{28,32}',
  '172.21.0.0/24{28,32}',
  '172.22.0.0/24{28,32}',
  '172.23.0.0/24{28,32}',
  '172.31.0.0/16+',
  '10.100.0.0/14+',
  '10.127.0.0/16+',
  '10.0.0.0/8{15,24}',
] as const;
export const DN42_IPV6_FILTER = ['fd00::/8{44,64}'] as const;
/** AllowedIPs of a dn42 tunnel: dn42 and private IPv4, ULA, link-local. */
export const DN42_ALLOWED_IPS = ['10.0.0.0/8', '172.20.0.0/14', '172.31.0.0/16', 'fd00::/8', 'fe80::/10'] as const;
export const IMPORT_LIMIT = 8500;
export const PERSISTENT_KEEPALIVE = 25;

/**
 * `dn42_<last four digits>` for an ASN of the dn42 range 4242420000 to
 * 4242429999 (the habit of the link-local default), else `dn42_<asn>`
 * (at most 15 characters, a Linux interface name).
 */
export function peerInterfaceName(ourAsn: number): string {
  return ourAsn >= 4242420000 && ourAsn <= 4242429999 ? `dn42_${String(ourAsn).slice(-4)}` : `dn42_${ourAsn}`;
}

const bare = (address: string): string => address.split('%')[0].split('/')[0];

/** Makes the peer-side WireGuard and BIRD configuration of a provisioned request; throws {@link PeerConfigError} when a needed fact is missing. */
export function peerConfig(request: PeerConfigRequest, options: PeerConfigOptions = {}): PeerConfig {
  const p = request.provision;
  const form = request.form;
  if (!form) throw new PeerConfigError('this peering fits none of the portal session forms; ask the operator for its configuration');
  if (!p) throw new PeerConfigError('the request has no provision parameters');
  const missing: string[] = [];
  if (!p.node_public_key) missing.push("our node's WireGuard public key");
  if (!request.link_local) missing.push('your link-local address');
  if (!p.node_link_local) missing.push("our node's link-local address");
  const ourV4 = options.node_ipv4 ?? p.node_ipv4 ?? null;
  const ourV6 = options.node_ipv6 ?? p.node_ipv6 ?? null;
  if (form !== 'link-local-mp' && !request.peer_ipv6) missing.push('your IPv6 tunnel address');
  if (form === 'dual-plain' && !request.peer_ipv4) missing.push('your IPv4 tunnel address');
  if (form !== 'link-local-mp' && !ourV6) missing.push("our node's IPv6 tunnel address");
  if (form === 'dual-plain' && !ourV4) missing.push("our node's IPv4 tunnel address");
  if (missing.length > 0) throw new PeerConfigError(`cannot make the configuration: missing ${missing.join(', ')}`);

  const iface = options.interface_name ?? peerInterfaceName(p.node_asn);
  const ourLl = bare(p.node_link_local!);
  const peerLl = bare(request.link_local!);

  // WireGuard (wg-quick)
  const postUp = [`PostUp = ip address add dev %i ${peerLl}/64`];
  if (form === 'dual-plain') postUp.push(`PostUp = ip address add dev %i ${bare(request.peer_ipv4!)}/32 peer ${bare(ourV4!)}/32`);
  if (form !== 'link-local-mp') postUp.push(`PostUp = ip address add dev %i ${bare(request.peer_ipv6!)}/128 peer ${bare(ourV6!)}/128`);
  const wgLines = [
    `# dn42 peering with AS${p.node_asn}${request.node_id ? ` (node ${request.node_id})` : ''}: save as /etc/wireguard/${iface}.conf, then wg-quick up ${iface}`,
    '[Interface]',
    `PrivateKey = ${PRIVATE_KEY_PLACEHOLDER}`,
    `ListenPort = ${LISTEN_PORT_PLACEHOLDER}`,
    `MTU = ${p.mtu}`,
    'Table = off',
    ...postUp,
    '',
    '[Peer]',
    `# AS${p.node_asn}`,
    `PublicKey = ${p.node_public_key}`,
    ...(p.endpoint ? [`Endpoint = ${p.endpoint}`] : ['# our node has no dial-in endpoint: it dials the endpoint you gave']),
    `AllowedIPs = ${DN42_ALLOWED_IPS.join(', ')}`,
    `PersistentKeepalive = ${PERSISTENT_KEEPALIVE}`,
    '',
  ];

  // BIRD 2
  const v4Filter = `[ ${DN42_IPV4_FILTER.join(', ')} ]`;
  const v6Filter = `[ ${DN42_IPV6_FILTER.join(', ')} ]`;
  const channel = (family: 'ipv4' | 'ipv6', extendedNextHop: boolean) => {
    const set = family === 'ipv4' ? v4Filter : v6Filter;
    return [
      `  ${family} {`,
      ...(extendedNextHop ? ['    extended next hop on;'] : []),
      `    import limit ${IMPORT_LIMIT} action block;`,
      `    import where net ~ ${set};`,
      `    export where source ~ [ RTS_STATIC, RTS_BGP ] && net ~ ${set};`,
      '  };',
    ];
  };
  const protocol = (name: string, lines: string[]) => [`protocol bgp ${name} {`, `  local${lines[0]} as ${request.asn};`, ...lines.slice(1), '}'];
  const names: string[] = [];
  const blocks: string[][] = [];
  const header = `# dn42 peering with AS${p.node_asn}${request.node_id ? ` (node ${request.node_id})` : ''} over ${iface}`;
  if (form === 'link-local-mp') {
    names.push(iface);
    blocks.push(
      protocol(iface, ['', `  neighbor ${ourLl}%${iface} as ${p.node_asn};`, '  path metric 1;', ...channel('ipv4', true), ...channel('ipv6', false)]),
    );
  } else if (form === 'ula-mp') {
    names.push(iface);
    blocks.push(
      protocol(iface, [
        ` ${bare(request.peer_ipv6!)}`,
        `  neighbor ${bare(ourV6!)} as ${p.node_asn};`,
        `  interface "${iface}";`,
        '  path metric 1;',
        ...channel('ipv4', true),
        ...channel('ipv6', false),
      ]),
    );
  } else {
    names.push(`${iface}_v4`, `${iface}_v6`);
    blocks.push(
      protocol(`${iface}_v4`, [
        ` ${bare(request.peer_ipv4!)}`,
        `  neighbor ${bare(ourV4!)} as ${p.node_asn};`,
        `  interface "${iface}";`,
        '  path metric 1;',
        ...channel('ipv4', false),
      ]),
      protocol(`${iface}_v6`, [
        ` ${bare(request.peer_ipv6!)}`,
        `  neighbor ${bare(ourV6!)} as ${p.node_asn};`,
        `  interface "${iface}";`,
        '  path metric 1;',
        ...channel('ipv6', false),
      ]),
    );
  }
  const bird = [header, ...blocks.map((b) => b.join('\n'))].join('\n') + '\n';
  return { form, interface_name: iface, protocol_names: names, wireguard: wgLines.join('\n'), bird };
}
