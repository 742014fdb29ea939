/** The portal API's answers the pages read (document 3, "Autopeering portal records"; shapes from http/control/portal/*-schemas.ts). */

import type { FlapAlertRow } from '../../domain/flaps/alerts.js';

/** An alert row as the portal passes it on (the console's flap-alert row). */
export type FlapAlert = FlapAlertRow;

export type SessionForm = 'link-local-mp' | 'ula-mp' | 'dual-plain';

export interface NodeOffer {
  node_id: string;
  site: string | null;
  endpoint_host: string | null;
  capacity: number;
  used_ports: number;
  free_ports: number;
  remaining: number;
  provisioned: number;
  max_sessions: number | null;
  region: string | null;
  country_code: string | null;
  description: string | null;
  bandwidth_mbps: number | null;
  monthly_quota_gb: number | null;
  notice: string | null;
  /** Why the node takes no peering yet (the server's reason); null: ready. */
  not_ready: string | null;
}

export interface Provision {
  endpoint: string | null;
  node_public_key: string | null;
  node_link_local: string | null;
  node_asn: number;
  mtu: number;
  /** Our tunnel addresses (present once the server names them). */
  node_ipv4?: string | null;
  node_ipv6?: string | null;
}

export interface RequestRow {
  id: number | null;
  adopted: boolean;
  node_id: string;
  asn: number;
  status: 'provisioned' | 'cancelled';
  peering_id: number | null;
  cancelled_by: 'requester' | 'operator' | null;
  reject_reason: string | null;
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
  from_snapshot: boolean;
  provision: Provision | null;
  created_at: string;
  updated_at: string;
}

export type Health = 'up' | 'connecting' | 'down' | 'unknown';
export interface RouteCounts {
  imported: number | null;
  exported: number | null;
}

export interface Live {
  bgp_state: string | null;
  bgp_health: Health;
  since: string | null;
  observed_at: string;
  established_seconds: number | null;
  wireguard: { latest_handshake_at: string | null; rx_bytes: number; tx_bytes: number } | null;
  routes: { ipv4: RouteCounts | null; ipv6: RouteCounts | null };
  sessions:
    { name: string; bgp_state: string | null; bgp_health: Health; since: string | null; established_seconds: number | null; routes: RouteCounts }[] | null;
}

export interface MtuProbe {
  status: 'ok' | 'mismatch' | 'unreachable';
  pmtu: number | null;
  mtu: number;
}
export interface LatencyProbe {
  rtt_ms_avg: number | null;
  rtt_ms_max: number | null;
  loss_pct: number;
}

export interface RequestDetail extends RequestRow {
  live: Live | null;
  mtu_probe: (MtuProbe & { probed_at: string }) | null;
  latency: (LatencyProbe & { probed_at: string }) | null;
}

export type ObservationRange = '6h' | '24h' | '7d' | '30d';
export const OBSERVATION_RANGES: ObservationRange[] = ['6h', '24h', '7d', '30d'];

interface Usage {
  from: number;
  to: number;
  rx_bytes: number;
  tx_bytes: number;
}
export interface RatePoint {
  t: number;
  rx_bytes_per_sec: number | null;
  tx_bytes_per_sec: number | null;
}
export interface RequestTraffic {
  request_id: number;
  node_id: string;
  interface: string | null;
  range: ObservationRange;
  bucket_seconds: number;
  current: RatePoint | null;
  usage: { hour: Usage; day: Usage; month: Usage; monthly_quota_gb: number | null };
  points: RatePoint[];
}

export interface RequestMetrics {
  request_id: number;
  sessions: string[];
  range: ObservationRange;
  bucket_seconds: number;
  points: { t: number; imported_v4: number | null; imported_v6: number | null; exported_v4: number | null; exported_v6: number | null }[];
}

export interface RequestRoutes {
  family: 4 | 6;
  captured_at: string | null;
  total: number;
  limit: number;
  offset: number;
  routes: { prefix: string; origin_asn: number | null; as_path: number[]; rpki: string | null }[];
}

export interface FlapPrefixRow {
  prefix: string;
  peer_asn: number | null;
  origin_asn: number | null;
  origin_name: string | null;
  as_path: number[] | null;
  max_score: number;
  total_changes: number | null;
  flapping: boolean;
  rate_per_s: number | null;
  nodes: { node_id: string; score: number }[];
  localization: { zone: string; culprit_asn: number | null; culprit_name: string | null; confidence: number } | null;
}

export interface MyFlaps {
  generated_at: string;
  asn: number;
  has_flaps: boolean;
  name: string | null;
  severity: number | null;
  prefix_count: number;
  prefixes_flapping: number;
  prefix_score_max: number | null;
  session_score_max: number | null;
  last_change_at: string | null;
  nodes: string[];
  sessions: { node_id: string; session: string; state: string; flap_score: number | null; flapping: boolean }[];
  prefixes: FlapPrefixRow[];
  alerts: FlapAlert[];
}

export const FORM_LABELS: Record<SessionForm, string> = {
  'link-local-mp': 'Link-local, multiprotocol',
  'ula-mp': 'ULA, single session',
  'dual-plain': 'Two plain sessions',
};

/** The pill class of a session health. */
export function healthClass(h: Health | null | undefined): string {
  return h === 'up' ? 'up' : h === 'connecting' ? 'warn' : h === 'down' ? 'down' : 'unknown';
}
