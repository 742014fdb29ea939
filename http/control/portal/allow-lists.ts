import type { FlapStatsPoint } from '../../../domain/flaps/flap-stats.js';
import type { Localization } from '../../../domain/flaps/localize.js';
import type { FlapPeerRow, PeerSession } from '../../../domain/flaps/peers.js';
import type { FeedRow, NodeScore, PeerDirection, PrefixRow } from '../../../domain/flaps/prefix-rows.js';
import type { FleetOverview, FleetRow } from '../../../domain/public/fleet-overview.js';
import type { Geo } from '../../../domain/public/geo.js';
import type { FlapAlertRow } from '../../../projections/flap-alerts/queries.js';
import type { TrafficPoint, TrafficTrend } from '../ui/traffic-trend.js';
import type { FleetRoutingBlock, SizePoint } from '../shared/routing-views.js';
import type { BreakdownNode, BreakdownPeer, TrafficBreakdown } from '../shared/traffic-breakdown.js';

/**
 * What the portal's read-only network view may show of the console's views
 * (document 3, "Read-only network view"): every response is the console
 * builder's answer passed through the allow-list here, so a field the console
 * adds later reaches the portal only when it is named below. Pure functions,
 * no I/O; the field lists are checked against the builders' types
 * (`satisfies`), so a renamed console field breaks the build, not the portal.
 *
 * Series points of the portal carry `t`, the bucket start in epoch seconds
 * (document 3, shared conventions), where the console answers `at` (ISO).
 */

/** A copy of `row` with exactly `keys` (a key missing from `row` stays missing). */
export function pick<T extends object, K extends keyof T>(row: T, keys: readonly K[]): Pick<T, K> {
  const out = {} as Pick<T, K>;
  for (const k of keys) if (k in row) out[k] = row[k];
  return out;
}

const epoch = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

// ---- Overview ----

export const GEO_FIELDS = ['lat', 'lon', 'city', 'country', 'region'] as const satisfies readonly (keyof Geo)[];
/** Document 3: overview node rows keep only these. */
export const OVERVIEW_NODE_FIELDS = ['node_id', 'health', 'site', 'region', 'geo', 'capabilities'] as const satisfies readonly (keyof FleetRow)[];
const SUMMARY_FIELDS = ['total', 'ok', 'degraded', 'stale', 'down', 'unknown'] as const satisfies readonly (keyof FleetOverview['summary'])[];
const AGENT_SUMMARY_FIELDS = ['online', 'stale', 'offline', 'agents_behind'] as const satisfies readonly (keyof FleetOverview['agent_summary'])[];

export const portalGeo = (geo: Geo | null) => (geo === null ? null : pick(geo, GEO_FIELDS));

export function portalOverview(o: FleetOverview) {
  return {
    generated_at: o.generated_at,
    summary: pick(o.summary, SUMMARY_FIELDS),
    agent_summary: pick(o.agent_summary, AGENT_SUMMARY_FIELDS),
    nodes: o.nodes.map((n) => ({ ...pick(n, OVERVIEW_NODE_FIELDS), geo: portalGeo(n.geo), capabilities: [...n.capabilities] })),
    links: o.links.map((l) => ({ a: l.a, b: l.b })),
  };
}

// ---- Traffic ----

const trafficPoint = (p: TrafficPoint) => ({ t: epoch(p.at), rx_bytes_per_sec: p.rx_bytes_per_sec, tx_bytes_per_sec: p.tx_bytes_per_sec });

export function portalTrafficTrend(t: TrafficTrend) {
  return {
    range: t.range,
    bucket_seconds: t.bucket_seconds,
    points: t.points.map(trafficPoint),
    points_previous: t.points_previous === null ? null : t.points_previous.map(trafficPoint),
  };
}

interface TrafficByAs {
  series: { asn: number; name: string | null; points: TrafficPoint[] }[];
  table: { asn: number; name: string | null; rx_bytes: number; tx_bytes: number; share: number | null }[];
}
interface TrafficMix {
  internal_bytes: number;
  external_bytes: number;
  rx_bytes: number;
  tx_bytes: number;
}
const AS_TABLE_FIELDS = ['asn', 'name', 'rx_bytes', 'tx_bytes', 'share'] as const satisfies readonly (keyof TrafficByAs['table'][number])[];
const MIX_FIELDS = ['internal_bytes', 'external_bytes', 'rx_bytes', 'tx_bytes'] as const satisfies readonly (keyof TrafficMix)[];

export function portalTrafficByAs(b: TrafficByAs | null) {
  if (b === null) return null;
  return {
    series: b.series.map((s) => ({ asn: s.asn, name: s.name, points: s.points.map(trafficPoint) })),
    table: b.table.map((r) => pick(r, AS_TABLE_FIELDS)),
  };
}

export const portalTrafficMix = (m: TrafficMix | null) => (m === null ? null : pick(m, MIX_FIELDS));

/** Document 3: peers keep only node_id, interface, rx and tx rates (no public key, no endpoint). */
export const BREAKDOWN_PEER_FIELDS = ['node_id', 'interface', 'rx_bytes_per_sec', 'tx_bytes_per_sec'] as const satisfies readonly (keyof BreakdownPeer)[];
const BREAKDOWN_NODE_FIELDS = [
  'node_id',
  'sampled_at',
  'rx_bytes_per_sec',
  'tx_bytes_per_sec',
  'peer_count',
] as const satisfies readonly (keyof BreakdownNode)[];
const RATE_FIELDS = ['rx_bytes_per_sec', 'tx_bytes_per_sec'] as const;

export function portalTrafficBreakdown(b: TrafficBreakdown) {
  return {
    generated_at: b.generated_at,
    totals: pick(b.totals, RATE_FIELDS),
    nodes: b.nodes.map((n) => ({ ...pick(n, BREAKDOWN_NODE_FIELDS), geo: portalGeo(n.geo) })),
    other: { node_count: b.other.node_count, ...pick(b.other, RATE_FIELDS) },
    peers: b.peers.map((p) => pick(p, BREAKDOWN_PEER_FIELDS)),
    peer_total: b.peer_total,
  };
}

// ---- Routing ----

const ROUTING_SUMMARY_FIELDS = [
  'nodes_reporting',
  'size',
  'size_v4',
  'size_v6',
  'local',
  'external',
  'as_count',
  'as_count_v4',
  'as_count_v6',
  'rpki',
  'rpki_v4',
  'rpki_v6',
] as const satisfies readonly (keyof FleetRoutingBlock['summary'])[];
const ORIGIN_FIELDS = ['asn', 'name', 'count', 'count_v4', 'count_v6', 'nodes'] as const satisfies readonly (keyof FleetRoutingBlock['origins'][number])[];
const RPKI_FIELDS = ['valid', 'invalid', 'not_found'] as const;
type Rpki = { valid: number; invalid: number; not_found: number } | null;
const rpki = (r: Rpki) => (r === null ? null : pick(r, RPKI_FIELDS));
const sizePoint = (p: SizePoint) => ({ t: epoch(p.at), size: p.size, size_v4: p.size_v4, size_v6: p.size_v6 });

export function portalRouting(b: FleetRoutingBlock) {
  const summary = pick(b.summary, ROUTING_SUMMARY_FIELDS);
  return {
    captured_at: b.captured_at,
    summary: { ...summary, rpki: rpki(summary.rpki), rpki_v4: rpki(summary.rpki_v4), rpki_v6: rpki(summary.rpki_v6) },
    trend: b.trend.map(sizePoint),
    origins: b.origins.map((o) => pick(o, ORIGIN_FIELDS)),
  };
}

// ---- Prefix flaps ----

const NODE_SCORE_FIELDS = ['node_id', 'score', 'changes', 'last_change_at', 'rate_per_s'] as const satisfies readonly (keyof NodeScore)[];
const STRENGTH_FIELDS = [
  'max_score',
  'total_changes',
  'flapping',
  'rate_per_s',
  'flapping_since',
  'flap_duration_s',
] as const satisfies readonly (keyof PeerDirection & keyof PrefixRow)[];
const DIRECTION_FIELDS = [
  'peer_asn',
  'peer_name',
  'origin_asn',
  'origin_name',
  'as_path',
  ...STRENGTH_FIELDS,
] as const satisfies readonly (keyof PrefixRow['peers'][number])[];
const FLAT_ROW_FIELDS = ['prefix', ...DIRECTION_FIELDS, 'moas'] as const satisfies readonly (keyof PeerDirection)[];
const PREFIX_ROW_FIELDS = [
  'prefix',
  'peer_asn',
  'peer_name',
  'origin_asn',
  'origin_name',
  'moas',
  'peer_count',
  ...STRENGTH_FIELDS,
] as const satisfies readonly (keyof PrefixRow)[];
const LOCALIZATION_FIELDS = [
  'zone',
  'confidence',
  'culprit_asn',
  'culprit_name',
  'culprit_edge',
  'representative_path',
] as const satisfies readonly (keyof Localization)[];
const SIGNAL_FIELDS = [
  'separation',
  'withdrawal_ratio',
  'flap_nodes',
  'session_flapping',
  'session_score',
] as const satisfies readonly (keyof Localization['signals'])[];
const FEED_FIELDS = ['node_id', 'feed_state', 'captured_at', 'total_changes'] as const satisfies readonly (keyof FeedRow)[];
const ZONES = ['near', 'origin', 'path', 'moas'] as const;

type Origin = { asn: number; name: string | null };
const origin = (o: Origin) => ({ asn: o.asn, name: o.name });
const nodeScores = (nodes: NodeScore[]) => nodes.map((n) => pick(n, NODE_SCORE_FIELDS));

export function portalLocalization(l: Localization | null) {
  if (l === null) return null;
  const s = l.signals;
  return {
    ...pick(l, LOCALIZATION_FIELDS),
    signals: { ...pick(s, SIGNAL_FIELDS), origins: s.origins === null ? null : s.origins.map(origin) },
  };
}

export function portalFlatRow(r: PeerDirection) {
  return { ...pick(r, FLAT_ROW_FIELDS), nodes: nodeScores(r.nodes), localization: portalLocalization(r.localization) };
}

function portalPrefixRow(r: PrefixRow) {
  return {
    ...pick(r, PREFIX_ROW_FIELDS),
    origins: r.origins.map(origin),
    nodes: nodeScores(r.nodes),
    peers: r.peers.map((p) => ({ ...pick(p, DIRECTION_FIELDS), nodes: nodeScores(p.nodes) })),
    localization: portalLocalization(r.localization),
  };
}

interface PrefixFlapsView {
  generated_at: string;
  rows?: PeerDirection[];
  prefixes?: PrefixRow[];
  feeds: FeedRow[];
  localization_summary: Record<(typeof ZONES)[number], number>;
}

/** `rows` (flat) or `prefixes` (group=prefix), as the console answered. */
export function portalPrefixFlaps(v: PrefixFlapsView) {
  return {
    generated_at: v.generated_at,
    ...(v.prefixes ? { prefixes: v.prefixes.map(portalPrefixRow) } : { rows: (v.rows ?? []).map(portalFlatRow) }),
    feeds: v.feeds.map((f) => pick(f, FEED_FIELDS)),
    localization_summary: pick(v.localization_summary, ZONES),
  };
}

// ---- Flap stats ----

interface FlapStats {
  range: string;
  window_s: number;
  bucket_s: number;
  generated_at: string;
  series: FlapStatsPoint[];
  gauge: { rate_per_s: number; current_rate_per_s: number | null; percentile: number; window_s: number };
}
const FLAP_POINT_FIELDS = [
  't',
  'changes',
  'listed_changes',
  'rate_per_s',
  'tracked_prefixes',
  'flapping_prefixes',
  'flapping_sessions',
  'open_alerts',
] as const satisfies readonly (keyof FlapStatsPoint)[];
const GAUGE_FIELDS = ['rate_per_s', 'current_rate_per_s', 'percentile', 'window_s'] as const satisfies readonly (keyof FlapStats['gauge'])[];

export function portalFlapStats(s: FlapStats) {
  return {
    range: s.range,
    window_s: s.window_s,
    bucket_s: s.bucket_s,
    generated_at: s.generated_at,
    series: s.series.map((p) => pick(p, FLAP_POINT_FIELDS)),
    gauge: pick(s.gauge, GAUGE_FIELDS),
  };
}

// ---- My flaps ----

const PEER_ROW_FIELDS = [
  'name',
  'severity',
  'prefix_count',
  'prefixes_flapping',
  'prefix_score_max',
  'session_score_max',
  'last_change_at',
] as const satisfies readonly (keyof FlapPeerRow)[];
const SESSION_FIELDS = ['node_id', 'session', 'state', 'flap_score', 'flapping'] as const satisfies readonly (keyof PeerSession)[];
const ALERT_FIELDS = [
  'id',
  'kind',
  'node_id',
  'name',
  'prefix',
  'peer_asn',
  'nodes',
  'peak_score',
  'last_score',
  'started_at',
  'resolved_at',
  'active',
] as const satisfies readonly (keyof FlapAlertRow)[];

export interface FlapPeerDetail extends FlapPeerRow {
  generated_at: string;
  prefixes: PeerDirection[];
  alerts: FlapAlertRow[];
}

/**
 * `/my/flaps`: the console's flap peer detail of the session's AS, or, when the
 * AS left no flap trace, the same keys with `has_flaps` false, no severity and
 * empty lists (decided in docs/decisions.md).
 */
export function portalMyFlaps(asn: number, generatedAt: string, d: FlapPeerDetail | null) {
  if (d === null) {
    return {
      generated_at: generatedAt,
      asn,
      has_flaps: false,
      name: null,
      severity: null,
      prefix_count: 0,
      prefixes_flapping: 0,
      prefix_score_max: null,
      session_score_max: null,
      last_change_at: null,
      nodes: [],
      sessions: [],
      prefixes: [],
      alerts: [],
    };
  }
  return {
    generated_at: d.generated_at,
    asn,
    has_flaps: true,
    ...pick(d, PEER_ROW_FIELDS),
    nodes: [...d.nodes],
    sessions: d.sessions.map((s) => pick(s, SESSION_FIELDS)),
    prefixes: d.prefixes.map(portalFlatRow),
    alerts: d.alerts.map((a) => ({ ...pick(a, ALERT_FIELDS), nodes: [...a.nodes] })),
  };
}
