import { isProtocolOfSession } from '../desired-state/bird-names.js';
import { formatIp, isIpv6LinkLocal, parseIp } from '../net/ip.js';
import { sessionHealth, type SessionHealth } from '../flaps/session.js';
import type { InterfaceSpec, SessionSpec } from '../node/specs.js';
import type { BgpState, RuntimeSnapshot } from '../telemetry/reports.js';
import type { ProvisionedPeering, RequestRecord, SessionForm } from './request.js';

/**
 * What the portal shows of a request (document 3, request detail), derived
 * from the peering as it is now: an operator's later change (a new key, MTU,
 * port) shows at once. A request whose peering is gone shows the record the
 * request was created with (the contract's audit snapshot).
 */

/** A peering with its children, as the read model gives it. */
export interface PeeringParts {
  node_id: string;
  name: string;
  notes: string | null;
  interfaces: { name: string; spec: InterfaceSpec }[];
  sessions: { name: string; spec: SessionSpec }[];
}

/** The node facts the `provision` block names, as they are now. */
export interface NodeFactsNow {
  asn: number;
  link_local: string | null;
  wireguard_public_key: string | null;
  endpoint_host: string | null;
}

export interface Displayed {
  form: SessionForm | null;
  public_key: string | null;
  endpoint: string | null;
  listen_port: number | null;
  mtu: number | null;
  interface_name: string | null;
  session_names: string[];
  link_local: string | null;
  peer_ipv4: string | null;
  peer_ipv6: string | null;
  notes: string | null;
  /** True when the peering is gone and the fields come from the request's record. */
  from_snapshot: boolean;
}

export interface ProvisionView {
  endpoint: string | null;
  node_public_key: string | null;
  node_link_local: string | null;
  node_asn: number;
  mtu: number;
  /** Our IPv4 tunnel address (the two plain sessions), else null. */
  node_ipv4: string | null;
  /** Our IPv6 (ULA) tunnel address (the ULA and the two plain sessions), else null. */
  node_ipv6: string | null;
}

const address = (text: string) => parseIp(text.split('%')[0]);

/** The session form a peering's sessions make, or null when they fit none of the three (an adopted manual peering). */
export function formOf(sessions: readonly { spec: SessionSpec }[]): SessionForm | null {
  const ips = sessions.map((s) => address(s.spec.neighbor_address));
  if (sessions.length === 2 && new Set(ips.map((ip) => ip?.kind())).size === 2 && ips.every((ip) => ip && !isIpv6LinkLocal(ip))) return 'dual-plain';
  if (sessions.length !== 1 || !ips[0] || ips[0].kind() !== 'ipv6') return null;
  if (isIpv6LinkLocal(ips[0])) return 'link-local-mp';
  return sessions[0].spec.address_family === 'mp-bgp' ? 'ula-mp' : null;
}

/** Dial-in host plus port (`[v6]:port` for an IPv6 literal); null without a host or a port. */
export function dialIn(host: string | null, port: number | null | undefined): string | null {
  if (host === null || port == null) return null;
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The displayed fields from the live peering, or from the record when the peering is gone. */
export function displayedOf(record: RequestRecord | null, peering: PeeringParts | null): Displayed {
  if (peering) {
    const iface = peering.interfaces[0]?.spec;
    const neighbors = peering.sessions.map((s) => s.spec.neighbor_address.split('%')[0]);
    const v4 = neighbors.find((n) => parseIp(n)?.kind() === 'ipv4') ?? null;
    const v6 = neighbors.find((n) => parseIp(n)?.kind() === 'ipv6' && !isIpv6LinkLocal(parseIp(n))) ?? null;
    return {
      form: formOf(peering.sessions),
      public_key: iface?.peer?.public_key ?? null,
      endpoint: iface?.peer?.endpoint ?? null,
      listen_port: iface?.listen_port ?? null,
      mtu: iface ? (iface.mtu ?? 1420) : null,
      interface_name: iface?.name ?? null,
      session_names: peering.sessions.map((s) => s.name),
      link_local: iface?.peer_link_local ?? null,
      peer_ipv4: v4,
      peer_ipv6: v6,
      notes: peering.notes,
      from_snapshot: false,
    };
  }
  if (!record) throw new Error('a portal row needs its peering or its record');
  const r = record.requested;
  return {
    form: record.form,
    public_key: r.public_key,
    endpoint: r.endpoint,
    listen_port: record.provision.listen_port,
    mtu: record.provision.mtu,
    interface_name: record.provision.interface_name,
    session_names: record.provision.session_names,
    link_local: r.link_local,
    peer_ipv4: r.peer_ipv4,
    peer_ipv6: r.peer_ipv6,
    notes: r.notes,
    from_snapshot: true,
  };
}

/**
 * Our tunnel address facing `neighbor` (the peer's IPv4 or ULA tunnel address):
 * the session's `source_address`, else the local side of the interface address
 * whose peer is the neighbour (`ours/32 peer theirs/32`); null when neither says.
 */
function ourAddressTowards(peering: PeeringParts, neighbor: string | null): string | null {
  const wanted = neighbor === null ? null : address(neighbor);
  if (!wanted) return null;
  const same = (text: string | null | undefined) => {
    const ip = text ? address(text.trim().split('/')[0]) : null;
    return ip !== null && formatIp(ip) === formatIp(wanted);
  };
  const session = peering.sessions.find((s) => same(s.spec.neighbor_address));
  if (session?.spec.source_address) return session.spec.source_address;
  for (const i of peering.interfaces) {
    for (const a of i.spec.addresses ?? []) {
      const [local, peer] = a.split(/\s+peer\s+/);
      if (peer !== undefined && same(peer)) return local.trim().split('/')[0];
    }
  }
  return null;
}

/** The `provision` block: from the node and the peering as they are, the record's when the peering is gone. */
export function provisionOf(
  provision: ProvisionedPeering | null,
  shown: Displayed,
  node: NodeFactsNow | null,
  peering: PeeringParts | null = null,
): ProvisionView | null {
  if (!shown.from_snapshot && node) {
    return {
      endpoint: dialIn(node.endpoint_host, shown.listen_port),
      node_public_key: node.wireguard_public_key,
      node_link_local: node.link_local,
      node_asn: node.asn,
      mtu: shown.mtu ?? 1420,
      node_ipv4: peering ? ourAddressTowards(peering, shown.peer_ipv4) : null,
      node_ipv6: peering ? ourAddressTowards(peering, shown.peer_ipv6) : null,
    };
  }
  if (!provision) return null;
  return {
    endpoint: provision.endpoint,
    node_public_key: provision.node_public_key,
    node_link_local: provision.node_link_local,
    node_asn: provision.node_asn,
    mtu: provision.mtu,
    node_ipv4: provision.node_ipv4 ?? null,
    node_ipv6: provision.node_ipv6 ?? null,
  };
}

export interface RouteCounts {
  imported: number | null;
  exported: number | null;
}

export interface LiveSession {
  name: string;
  bgp_state: BgpState | null;
  bgp_health: SessionHealth;
  since: string | null;
  established_seconds: number | null;
  routes: RouteCounts;
}

export interface Live {
  bgp_state: BgpState | null;
  bgp_health: SessionHealth;
  since: string | null;
  observed_at: string;
  established_seconds: number | null;
  wireguard: { latest_handshake_at: string | null; rx_bytes: number; tx_bytes: number } | null;
  routes: { ipv4: RouteCounts | null; ipv6: RouteCounts | null };
  sessions: LiveSession[] | null;
}

/** A protocol's route counts of one address family, as agents report them per channel; null when neither is reported. */
function familyRoutes(p: RuntimeSnapshot['bgp_protocols'][number] | undefined, suffix: '_v4' | '_v6'): RouteCounts | null {
  const imported = (suffix === '_v4' ? p?.routes_imported_v4 : p?.routes_imported_v6) ?? null;
  const exported = (suffix === '_v4' ? p?.routes_exported_v4 : p?.routes_exported_v6) ?? null;
  return imported === null && exported === null ? null : { imported, exported };
}

const HEALTH_ORDER: readonly SessionHealth[] = ['down', 'connecting', 'unknown', 'up'];

/**
 * The request's live view from the node's latest runtime snapshot (null
 * without one): BGP state and health of its sessions (the worst for two), how
 * long established (seconds from `since` to the snapshot), the WireGuard peer
 * with the request's key on its interface, route counts per family. The
 * multiprotocol forms carry both families in one protocol: their per-family
 * counts are the protocol's channel counts (`routes_imported_v4` ...), null
 * from an agent that does not report them.
 */
export function liveOf(snapshot: RuntimeSnapshot | null, shown: Displayed): Live | null {
  if (!snapshot) return null;
  const observed = Date.parse(snapshot.captured_at);
  const sessions: LiveSession[] = shown.session_names.map((name) => {
    const p = snapshot.bgp_protocols.find((q) => isProtocolOfSession(q.name, name));
    const since = p?.since ?? null;
    return {
      name,
      bgp_state: p?.state ?? null,
      bgp_health: sessionHealth(p?.state),
      since,
      established_seconds: p?.state === 'established' && since ? Math.max(0, Math.floor((observed - Date.parse(since)) / 1000)) : null,
      routes: { imported: p?.routes_imported ?? null, exported: p?.routes_exported ?? null },
    };
  });
  const worst = [...sessions].sort((a, b) => HEALTH_ORDER.indexOf(a.bgp_health) - HEALTH_ORDER.indexOf(b.bgp_health))[0];
  const latestSince = sessions
    .map((s) => s.since)
    .filter((s): s is string => s !== null)
    .sort()
    .at(-1);
  const wg = snapshot.wireguard_interfaces.find((i) => i.name === shown.interface_name);
  const peer = wg?.peers.find((p) => p.public_key === shown.public_key) ?? (wg?.peers.length === 1 ? wg.peers[0] : undefined);
  // Two plain sessions: one family each. The multiprotocol forms: the one session's per-family counts (null from an agent that does not report them).
  const mp = shown.form === 'dual-plain' ? undefined : snapshot.bgp_protocols.find((q) => isProtocolOfSession(q.name, shown.session_names[0]));
  const byFamily = (suffix: '_v4' | '_v6') =>
    shown.form === 'dual-plain' ? (sessions.find((s) => s.name.endsWith(suffix))?.routes ?? null) : familyRoutes(mp, suffix);
  return {
    bgp_state: worst?.bgp_state ?? null,
    bgp_health: worst?.bgp_health ?? 'unknown',
    since: latestSince ?? null,
    observed_at: new Date(observed).toISOString(),
    established_seconds:
      sessions.length > 0 && sessions.every((s) => s.established_seconds !== null) ? Math.min(...sessions.map((s) => s.established_seconds!)) : null,
    wireguard: peer ? { latest_handshake_at: peer.latest_handshake_at ?? null, rx_bytes: peer.rx_bytes, tx_bytes: peer.tx_bytes } : null,
    routes: { ipv4: byFamily('_v4'), ipv6: byFamily('_v6') },
    sessions: shown.form === 'dual-plain' ? sessions : null,
  };
}
