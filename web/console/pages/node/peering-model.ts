/**
 * The peering form's model for the Peerings tab: what the server answers
 * (`PeeringFull`, document 2 "Peering", "Interface", "BGP session"), the form's
 * strings, and the conversions both ways. Unknown specification fields of an
 * edited record are kept (the form overlays only what it shows).
 */
import { ApiError, type PeeringFull } from '../../../shared/api.js';

/** The form of a peering, its interfaces and its BGP sessions; `original` is the edited record's specification. */
export interface PeeringForm {
  name: string;
  remote_asn: string;
  remote_node_id: string;
  remote_label: string;
  is_internal: boolean;
  enabled: boolean;
  notes: string;
  interfaces: {
    original: Record<string, unknown>;
    enabled: boolean;
    sort_order: number;
    name: string;
    listen_port: string;
    addresses: string;
    mtu: string;
    peer_link_local: string;
    public_key: string;
    endpoint: string;
    allowed_ips: string;
    keepalive: string;
  }[];
  sessions: {
    original: Record<string, unknown>;
    sort_order: number;
    name: string;
    neighbor_address: string;
    interface: string;
    address_family: '' | 'ipv4' | 'ipv6' | 'mp-bgp';
    extended_next_hop: boolean;
    enabled: boolean;
    link_latency: string;
    policy: '' | 'peer' | 'route_collector';
  }[];
}

const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
const list = (v: unknown): string => (Array.isArray(v) ? v.join(', ') : '');

export function emptyInterface(): PeeringForm['interfaces'][number] {
  return {
    original: {},
    enabled: true,
    sort_order: 0,
    name: '',
    listen_port: '',
    addresses: '',
    mtu: '',
    peer_link_local: '',
    public_key: '',
    endpoint: '',
    allowed_ips: '',
    keepalive: '',
  };
}

export function emptySession(sortOrder = 0): PeeringForm['sessions'][number] {
  return {
    original: {},
    sort_order: sortOrder,
    name: '',
    neighbor_address: '',
    interface: '',
    address_family: 'mp-bgp',
    extended_next_hop: true,
    enabled: true,
    link_latency: '',
    policy: '',
  };
}

export function emptyForm(): PeeringForm {
  return {
    name: '',
    remote_asn: '',
    remote_node_id: '',
    remote_label: '',
    is_internal: false,
    enabled: true,
    notes: '',
    interfaces: [emptyInterface()],
    sessions: [emptySession()],
  };
}

export function formOf(p: PeeringFull): PeeringForm {
  return {
    name: p.name,
    remote_asn: String(p.remote_asn),
    remote_node_id: str(p.remote_node_id),
    remote_label: str(p.remote_label),
    is_internal: p.is_internal,
    enabled: p.enabled,
    notes: str(p.notes),
    interfaces: p.interfaces.map((i) => ({
      original: i.spec,
      enabled: i.enabled,
      sort_order: i.sort_order,
      name: i.spec.name,
      listen_port: str(i.spec.listen_port),
      addresses: list(i.spec.addresses),
      mtu: str(i.spec.mtu),
      peer_link_local: str(i.spec.peer_link_local),
      public_key: str(i.spec.peer?.public_key),
      endpoint: str(i.spec.peer?.endpoint),
      allowed_ips: list(i.spec.peer?.allowed_ips),
      keepalive: str(i.spec.peer?.persistent_keepalive_seconds),
    })),
    sessions: p.bgp_sessions.map((s) => ({
      original: s.spec,
      sort_order: s.sort_order,
      name: s.spec.name,
      neighbor_address: s.spec.neighbor_address,
      interface: str(s.spec.interface),
      address_family: s.spec.address_family ?? '',
      extended_next_hop: s.spec.extended_next_hop ?? false,
      enabled: s.spec.enabled ?? s.enabled,
      link_latency: str(s.spec.link_latency),
      policy: s.spec.policy ?? '',
    })),
  };
}

/** An integer as typed; anything else goes to the server as typed so its validation names the field. */
function int(s: string): number | string | null {
  const t = s.trim();
  if (t === '') return null;
  return /^-?\d+$/.test(t) ? Number(t) : t;
}
const text = (s: string): string | null => (s.trim() === '' ? null : s.trim());
const items = (s: string): string[] =>
  s
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);

/** Sets `key` to `value`, or removes it when the value is null and the original did not have it. */
function put(target: Record<string, unknown>, key: string, value: unknown): void {
  if (value === null && !(key in target)) return;
  target[key] = value;
}

export function interfaceSpec(f: PeeringForm['interfaces'][number]): Record<string, unknown> {
  const spec: Record<string, unknown> = { ...f.original, name: f.name.trim() };
  put(spec, 'listen_port', int(f.listen_port));
  spec.addresses = items(f.addresses);
  const mtu = int(f.mtu);
  if (mtu === null) delete spec.mtu;
  else spec.mtu = mtu;
  put(spec, 'peer_link_local', text(f.peer_link_local));
  const peer: Record<string, unknown> = { ...((f.original.peer as Record<string, unknown> | undefined) ?? {}) };
  put(peer, 'public_key', text(f.public_key));
  put(peer, 'endpoint', text(f.endpoint));
  peer.allowed_ips = items(f.allowed_ips);
  put(peer, 'persistent_keepalive_seconds', int(f.keepalive));
  spec.peer = peer;
  return spec;
}

export function sessionSpec(f: PeeringForm['sessions'][number], remoteAsn: number | string | null): Record<string, unknown> {
  const spec: Record<string, unknown> = {
    ...f.original,
    name: f.name.trim(),
    remote_asn: remoteAsn,
    neighbor_address: f.neighbor_address.trim(),
    enabled: f.enabled,
    extended_next_hop: f.extended_next_hop,
  };
  put(spec, 'interface', text(f.interface));
  if (f.address_family) spec.address_family = f.address_family;
  if (f.policy) spec.policy = f.policy;
  put(spec, 'link_latency', int(f.link_latency));
  return spec;
}

export function peeringIn(f: PeeringForm): Record<string, unknown> {
  return {
    name: f.name.trim(),
    remote_asn: int(f.remote_asn),
    remote_node_id: text(f.remote_node_id),
    remote_label: text(f.remote_label),
    is_internal: f.is_internal,
    enabled: f.enabled,
    notes: text(f.notes),
  };
}

/** `POST /admin/nodes/{id}/peerings/provision`: one interface, every session. */
export function provisionBody(f: PeeringForm): Record<string, unknown> {
  const asn = int(f.remote_asn);
  return {
    peering: peeringIn(f),
    interface_spec: interfaceSpec(f.interfaces[0]),
    interface_enabled: f.interfaces[0].enabled,
    bgp_specs: f.sessions.map((s) => sessionSpec(s, asn)),
  };
}

/** `PUT /admin/nodes/{id}/peerings/full`: the peering with its whole child sets. */
export function fullBody(f: PeeringForm): Record<string, unknown> {
  const asn = int(f.remote_asn);
  return {
    peering: peeringIn(f),
    interfaces: f.interfaces.map((i, n) => ({ spec: interfaceSpec(i), enabled: i.enabled, sort_order: i.sort_order || n })),
    bgp_sessions: f.sessions.map((s, n) => ({ spec: sessionSpec(s, asn), sort_order: s.sort_order || n })),
  };
}

/**
 * The server's complaints keyed by the form's fields (`peering.name`,
 * `interfaces.0.listen_port`, `sessions.1.neighbor_address`): the 422 field
 * paths of both bodies, and the 409/400 detail families of document 2.
 */
export function formErrors(err: ApiError, f: PeeringForm): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, msg] of Object.entries(err.fieldErrors)) {
    const k = key
      .replace(/^interface_spec\.peer\./, 'interfaces.0.')
      .replace(/^interface_spec\./, 'interfaces.0.')
      .replace(/^interfaces\.(\d+)\.spec\.peer\./, 'interfaces.$1.')
      .replace(/^interfaces\.(\d+)\.spec\./, 'interfaces.$1.')
      .replace(/^bgp_specs\.(\d+)\./, 'sessions.$1.')
      .replace(/^bgp_spec\./, 'sessions.0.')
      .replace(/^bgp_sessions\.(\d+)\.spec\./, 'sessions.$1.')
      .replace(/^spec\.(listen_port|addresses|mtu|peer_link_local|peer)\b/, 'interfaces.0.$1')
      .replace(/^interfaces\.(\d+)\.persistent_keepalive_seconds$/, 'interfaces.$1.keepalive')
      .replace(/^sessions\.(\d+)\.remote_asn$/, 'peering.remote_asn');
    out[k] ??= msg;
  }
  const d = err.detail;
  let m: RegExpExecArray | null;
  if ((m = /^peering (.+) already exists/.exec(d))) out['peering.name'] ??= d;
  if ((m = /^interface (.+) already exists/.exec(d))) {
    const i = f.interfaces.findIndex((x) => x.name.trim() === m![1]);
    out[`interfaces.${Math.max(0, i)}.name`] ??= d;
  }
  if ((m = /^bgp session (.+) already exists/.exec(d))) {
    const i = f.sessions.findIndex((x) => x.name.trim() === m![1]);
    out[`sessions.${Math.max(0, i)}.name`] ??= d;
  }
  if ((m = /^wireguard listen_port (\d+)/.exec(d))) {
    const i = f.interfaces.findIndex((x) => x.listen_port.trim() === m![1]);
    out[`interfaces.${Math.max(0, i)}.listen_port`] ??= d;
  }
  if (/^wireguard listen_port must be inside/.test(d)) out['interfaces.0.listen_port'] ??= d;
  if (/^unknown node /.test(d) && err.status === 400) out['peering.remote_node_id'] ??= d;
  return out;
}

/** The smallest port above the used ones (51820 when none is used). */
export function nextFreePort(used: number[]): number {
  if (!used.length) return 51820;
  let p = Math.min(...used);
  while (used.includes(p)) p++;
  return p;
}

/** dn42 latency communities (64511, n): the round trip each stands for. */
export const LATENCY: [number, string][] = [
  [1, 'under 2.7 ms'],
  [2, 'under 7.3 ms'],
  [3, 'under 20 ms'],
  [4, 'under 55 ms'],
  [5, 'under 148 ms'],
  [6, 'under 403 ms'],
  [7, 'under 1.1 s'],
  [8, 'under 3 s'],
  [9, '3 s or more'],
];
