import type { DomainEvent } from '../decider.js';
import { PREFIX_ALERT_CLOSE, PREFIX_ALERT_OPEN } from './prefix-scores.js';
import { SESSION_FLAP } from './session.js';

/**
 * Flap alerts (document 3, "Flap scores", alert transitions): an alert opens
 * when a score is at or over its alert line and none is open for the same key,
 * and resolves when the score falls below the close line (hysteresis: between
 * the two lines an open alert stays open and a closed one stays closed). Every
 * alert is two events of the one `flap-alerts` stream; the id of an alert is
 * the stream version of its `FlapAlertOpened` plus one, so a replay gives the
 * same ids. Pure: the scores and the clock come in.
 */
export const FLAP_ALERTS_STREAM = 'flap-alerts';

export type AlertKind = 'session' | 'prefix';

export const ALERT_LINES: Record<AlertKind, { open: number; close: number }> = {
  session: { open: SESSION_FLAP.alertOpen, close: SESSION_FLAP.alertClose },
  prefix: { open: PREFIX_ALERT_OPEN, close: PREFIX_ALERT_CLOSE },
};

/** Where an alert is: a BGP session (node and protocol name) or a (prefix, peer AS) direction. */
export type AlertKey = { kind: 'session'; node_id: string; session: string } | { kind: 'prefix'; prefix: string; peer_asn: number | null };

export const keyString = (key: AlertKey): string => (key.kind === 'session' ? `session ${key.node_id} ${key.session}` : `prefix ${key.prefix} ${key.peer_asn}`);

/** A score now, from the read models of active nodes only. */
export interface ScoreReading {
  key: AlertKey;
  score: number;
  /** The nodes involved: the session's node, or the nodes where the prefix direction is at the list line or over. */
  nodes: string[];
  /** Session alerts: the peer AS of an eBGP session as the latest snapshot shows it (null for iBGP or unknown); prefix alerts: absent (the key has it). */
  remote_asn?: number | null;
}

export interface OpenAlert {
  alert_id: number;
  key: AlertKey;
  /** Every node involved while it was open. */
  nodes: string[];
  peak_score: number;
  last_score: number;
}

/**
 * `below_close_line`: the score fell below the close line. `source_gone`: no
 * score any more (the node was decommissioned or deleted, or no active node
 * reports the prefix direction): the alert resolves with its last known score.
 */
export type Resolution = 'below_close_line' | 'source_gone';

export type FlapAlertEvent =
  | DomainEvent<'FlapAlertOpened', { key: AlertKey; nodes: string[]; score: number; at: string; remote_asn?: number | null }>
  | DomainEvent<
      'FlapAlertResolved',
      { alert_id: number; key: AlertKey; nodes: string[]; peak_score: number; last_score: number; at: string; resolution: Resolution }
    >;

export const FLAP_ALERT_EVENT_TYPES: readonly FlapAlertEvent['type'][] = ['FlapAlertOpened', 'FlapAlertResolved'];

/** Open alerts by key string. */
export type OpenAlerts = ReadonlyMap<string, OpenAlert>;

/** The open alerts after one more event, `version` being its place in the stream. */
export function evolveOpenAlerts(state: OpenAlerts, event: FlapAlertEvent, version: number): OpenAlerts {
  const next = new Map(state);
  switch (event.type) {
    case 'FlapAlertOpened':
      next.set(keyString(event.data.key), {
        alert_id: version + 1,
        key: event.data.key,
        nodes: event.data.nodes,
        peak_score: event.data.score,
        last_score: event.data.score,
      });
      return next;
    case 'FlapAlertResolved':
      next.delete(keyString(event.data.key));
      return next;
  }
}

/**
 * One evaluation: resolutions of open alerts (by alert id), then openings (by
 * key), so the events of one evaluation come in a stable order.
 */
export function decideAlerts(open: OpenAlerts, readings: readonly ScoreReading[], now: Date): FlapAlertEvent[] {
  const at = now.toISOString();
  const byKey = new Map(readings.map((r) => [keyString(r.key), r]));
  const resolved: FlapAlertEvent[] = [];
  for (const alert of [...open.values()].sort((a, b) => a.alert_id - b.alert_id)) {
    const reading = byKey.get(keyString(alert.key));
    if (reading && reading.score >= ALERT_LINES[alert.key.kind].close) continue;
    const last = reading ? reading.score : alert.last_score;
    resolved.push({
      type: 'FlapAlertResolved',
      data: {
        alert_id: alert.alert_id,
        key: alert.key,
        nodes: reading ? unionNodes(alert.nodes, reading.nodes) : alert.nodes,
        peak_score: Math.max(alert.peak_score, last),
        last_score: last,
        at,
        resolution: reading ? 'below_close_line' : 'source_gone',
      },
    });
  }
  const opened: FlapAlertEvent[] = readings
    .filter((r) => r.score >= ALERT_LINES[r.key.kind].open && !open.has(keyString(r.key)))
    .sort((a, b) => (keyString(a.key) < keyString(b.key) ? -1 : 1))
    .map((r) => ({
      type: 'FlapAlertOpened',
      data: { key: r.key, nodes: r.nodes, score: r.score, at, ...(r.key.kind === 'session' ? { remote_asn: r.remote_asn ?? null } : {}) },
    }));
  return [...resolved, ...opened];
}

/** The nodes of an open alert after one more reading: every node seen so far, sorted. */
export const unionNodes = (a: readonly string[], b: readonly string[]): string[] => [...new Set([...a, ...b])].sort();

/** A flap alert as `/ui/fleet/flap-alerts` answers it (document 3, "Other flap records"). */
export interface FlapAlertRow {
  id: number;
  kind: AlertKind;
  /** Session alerts: the node and the protocol name; null for prefix alerts. */
  node_id: string | null;
  name: string | null;
  /** Prefix alerts: the prefix; null for session alerts. */
  prefix: string | null;
  /** Prefix alerts: the peer AS of the direction (null: own origin or no attribution); session alerts: the eBGP session's remote AS when it opened (null for iBGP). */
  peer_asn: number | null;
  nodes: string[];
  peak_score: number;
  last_score: number;
  started_at: string;
  resolved_at: string | null;
  active: boolean;
}
