/**
 * What notifies (issue 32): a signal is one thing that happened, in a form the
 * subscriptions filter (kind, node, severity, peer AS) and the channels render.
 * Pure: the events and read-model facts it is made of come in.
 */

export const SIGNAL_KINDS = [
  'flap_alert_opened',
  'flap_alert_cleared',
  'node_health',
  'apply_failed',
  'peering_request',
  'session_down',
  'registry_sync_failed',
  'registration_pending',
] as const;
export type SignalKind = (typeof SIGNAL_KINDS)[number];

/** Kinds a peer may subscribe to: the ones about one peering (its session, its prefixes, its request). */
export const PEER_SIGNAL_KINDS: readonly SignalKind[] = ['flap_alert_opened', 'flap_alert_cleared', 'session_down', 'peering_request'];

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const severityRank = (s: Severity): number => SEVERITIES.indexOf(s);

/** One notification before it is fanned out to channels. */
export interface Signal {
  /** Stable id of the occurrence (event id, or a key of the fact): with the channel it makes the idempotency key. */
  id: string;
  kind: SignalKind | 'test' | 'email_confirmation' | 'summary';
  severity: Severity;
  /** The node it is about; null for fleet-wide signals. */
  node_id: string | null;
  /** Every node involved (a prefix alert may span several); a node filter matches any of them. */
  nodes: string[];
  /** The peer AS it concerns (a peering's remote AS); null when no peer is involved. Peers see only their own. */
  peer_asn: number | null;
  /** Repeats of the same group within a subscription's window are suppressed. */
  group: string;
  /** One line: the chat message, the mail subject. */
  title: string;
  /** Further lines (localisation, reasons). */
  lines: string[];
  /** When it happened (the event's time). */
  at: string;
  /** Kind-specific facts for the JSON payload. */
  facts: Record<string, unknown>;
}

/** A subscription's filter; empty lists match everything. */
export interface SignalFilter {
  kinds: readonly SignalKind[];
  node_ids: readonly string[];
  min_severity: Severity;
}

export function filterMatches(filter: SignalFilter, signal: Pick<Signal, 'kind' | 'nodes' | 'severity'>): boolean {
  if (signal.kind === 'test' || signal.kind === 'email_confirmation' || signal.kind === 'summary') return false;
  if (filter.kinds.length > 0 && !filter.kinds.includes(signal.kind)) return false;
  if (filter.node_ids.length > 0 && !signal.nodes.some((n) => filter.node_ids.includes(n))) return false;
  return severityRank(signal.severity) >= severityRank(filter.min_severity);
}

export const HEALTH_SEVERITY: Record<string, Severity> = { ok: 'info', unknown: 'info', degraded: 'warning', stale: 'critical', down: 'critical' };
