import { unreachable } from '../decider.js';
import type { RegistrationRequested } from '../agent/registration.js';
import type { RequestEvent } from '../autopeering/request.js';
import type { FlapAlertEvent } from '../flaps/alerts.js';
import type { NodeStatusEvent } from '../telemetry/health.js';
import { HEALTH_SEVERITY, type Signal } from './signals.js';

/**
 * The signals an event of the store makes (issue 32). Pure: the event, its id
 * and time, and what the subscriber looked up come in. A session going down is
 * a pending signal: it notifies only if the session is still down after the
 * subscription's `down_after_s` (`pending`), and its coming back cancels it
 * (`recovered`).
 */
export type SourceEvent = FlapAlertEvent | NodeStatusEvent | RequestEvent | RegistrationRequested;

export const SIGNAL_SOURCE_EVENT_TYPES: readonly SourceEvent['type'][] = [
  'FlapAlertOpened',
  'FlapAlertResolved',
  'NodeHealthChanged',
  'BgpSessionStateChanged',
  'AutopeeringRequestProvisioned',
  'RegistrationRequested',
];

export interface Lookups {
  /** The remote AS of a node's BGP session, when it is an eBGP session the read models know. */
  sessionPeerAsn: number | null;
  /** A flap alert's localisation (the flap page's): its lines, and the culprit AS when one is named. */
  localization: Localized;
}

export interface Localized {
  lines: string[];
  culprit_asn: number | null;
}

export const NOT_LOCALIZED: Localized = { lines: [], culprit_asn: null };

export type FromEvent = { signal: Signal } | { pending: Signal; cancelKey: string } | { recovered: string } | null;

export const sessionCancelKey = (nodeId: string, session: string): string => `session_down ${nodeId} ${session}`;

/** A session_down signal as one subscription sends it: said with the time it waited for (`has been down for 10 min`). */
export function downFor(signal: Signal, downAfterS: number): Signal {
  if (downAfterS === 0) return signal;
  const span = downAfterS % 60 === 0 ? ` for ${downAfterS / 60} min` : ` for ${downAfterS} s`;
  return { ...signal, title: `${signal.title.replace(/ is down$/, ' has been down')}${span}`, facts: { ...signal.facts, down_for_s: downAfterS } };
}

const asName = (asn: number | null | undefined) => (asn == null ? '' : ` (AS${asn})`);

export function fromEvent(event: SourceEvent, id: string, at: string, lookups: Lookups): FromEvent {
  switch (event.type) {
    case 'FlapAlertOpened':
    case 'FlapAlertResolved': {
      const opened = event.type === 'FlapAlertOpened';
      const { key, nodes } = event.data;
      const score = opened ? event.data.score : event.data.last_score;
      const where =
        key.kind === 'session' ? `session ${key.session} on ${key.node_id}` : `prefix ${key.prefix}${key.peer_asn !== null ? ` from AS${key.peer_asn}` : ''}`;
      const peerAsn = key.kind === 'session' ? (opened ? (event.data.remote_asn ?? lookups.sessionPeerAsn) : lookups.sessionPeerAsn) : key.peer_asn;
      return {
        signal: {
          id,
          kind: opened ? 'flap_alert_opened' : 'flap_alert_cleared',
          severity: opened ? 'warning' : 'info',
          node_id: key.kind === 'session' ? key.node_id : (nodes[0] ?? null),
          nodes: key.kind === 'session' ? [key.node_id] : nodes,
          peer_asn: peerAsn ?? null,
          group: `${opened ? 'flap_alert_opened' : 'flap_alert_cleared'} ${key.kind === 'session' ? `${key.node_id} ${key.session}` : `${key.prefix} ${key.peer_asn}`}`,
          title: `${opened ? 'Flap alert opened' : 'Flap alert cleared'}: ${where}${key.kind === 'session' ? asName(peerAsn) : ''}`,
          lines: [
            `score ${score.toFixed(1)}${opened ? '' : ` (peak ${event.data.peak_score.toFixed(1)}, ${event.data.resolution.replaceAll('_', ' ')})`}`,
            `nodes: ${nodes.join(', ') || '-'}`,
            ...lookups.localization.lines,
          ],
          at,
          facts: {
            alert_key: key,
            nodes,
            score,
            culprit_asn: lookups.localization.culprit_asn,
            ...(opened ? {} : { alert_id: event.data.alert_id, peak_score: event.data.peak_score, resolution: event.data.resolution }),
          },
        },
      };
    }
    case 'NodeHealthChanged': {
      const { node_id, from, to, reasons } = event.data;
      if (to === 'unknown') return null;
      return {
        signal: {
          id,
          kind: 'node_health',
          severity: HEALTH_SEVERITY[to] ?? 'info',
          node_id,
          nodes: [node_id],
          peer_asn: null,
          group: `node_health ${node_id} ${to}`,
          title: `Node ${node_id} is ${to} (was ${from})`,
          lines: reasons,
          at,
          facts: { from, to, reasons },
        },
      };
    }
    case 'BgpSessionStateChanged': {
      const { node_id, session, from, to } = event.data;
      const cancelKey = sessionCancelKey(node_id, session);
      if (to === 'established') return { recovered: cancelKey };
      if (from !== 'established') return null;
      return {
        cancelKey,
        pending: {
          id,
          kind: 'session_down',
          severity: 'critical',
          node_id,
          nodes: [node_id],
          peer_asn: lookups.sessionPeerAsn,
          group: `session_down ${node_id} ${session}`,
          title: `Session ${session} on ${node_id}${asName(lookups.sessionPeerAsn)} is down`,
          lines: [`state ${to} since ${at}`],
          at,
          facts: { session, state: to, since: at },
        },
      };
    }
    case 'AutopeeringRequestProvisioned': {
      const r = event.data;
      return {
        signal: {
          id,
          kind: 'peering_request',
          severity: 'info',
          node_id: r.node_id,
          nodes: [r.node_id],
          peer_asn: r.asn,
          group: `peering_request ${r.request_id}`,
          title: `Peering request ${r.request_id} of AS${r.asn} at ${r.node_id}`,
          lines: [`form ${r.form}, peering ${r.peering_id}${r.mntner ? `, maintainer ${r.mntner}` : ''}`],
          at,
          facts: { request_id: r.request_id, asn: r.asn, peering_id: r.peering_id, form: r.form },
        },
      };
    }
    case 'RegistrationRequested': {
      const r = event.data;
      return {
        signal: {
          id,
          kind: 'registration_pending',
          severity: 'warning',
          node_id: r.node_id,
          nodes: [r.node_id],
          peer_asn: null,
          group: `registration_pending ${r.node_id}`,
          title: `Node ${r.node_id} asks to register and waits for approval`,
          lines: [`host ${r.inventory.hostname} (${r.inventory.os}, ${r.inventory.arch}) via ${r.via}`],
          at,
          facts: { registration_id: r.registration_id, via: r.via },
        },
      };
    }
    case 'BgpSessionRestarted':
    case 'AutopeeringRequestCancelled':
      return null;
    default:
      return unreachable(event);
  }
}

/** What a flap alert's notification says of its localisation (the flap page's zones). */
export function localizationOf(
  l: { zone: string; confidence: number; culprit_asn: number | null; culprit_name: string | null; culprit_edge: [number, number] | null } | null,
): Localized {
  if (!l) return { lines: ['localised: not yet (too few observations)'], culprit_asn: null };
  const culprit = l.culprit_asn === null ? '' : ` at AS${l.culprit_asn}${l.culprit_name ? ` (${l.culprit_name})` : ''}`;
  const edge = l.culprit_edge ? `, edge AS${l.culprit_edge[0]}-AS${l.culprit_edge[1]}` : '';
  return { lines: [`localised: ${l.zone}${culprit}${edge}, confidence ${Math.round(l.confidence * 100)} %`], culprit_asn: l.culprit_asn };
}

/** A signal as a peer's channel sends it: a flap localised in the peer's own network says so. */
export function forPeer(signal: Signal, asn: number): Signal {
  if (signal.facts.culprit_asn !== asn) return signal;
  return { ...signal, lines: [...signal.lines, `This is localised on your side: AS${asn} is where the flapping starts.`] };
}
