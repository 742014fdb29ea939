import type { DomainEvent } from '../decider.js';

/**
 * The `fleet-mitigations` stream remembers which sessions a peer-disable
 * turned off and what their `enabled` was before (`true`, or null when the
 * spec did not say), so peer-enable restores exactly those and leaves a
 * session an operator had disabled on purpose as it was. Prefix blocks need
 * no memory here: the node templates hold them.
 */
export const MITIGATIONS_STREAM = 'fleet-mitigations';

export interface DisabledSession {
  node_id: string;
  session_id: number;
  /** The spec's `enabled` before the mitigation: true, or null when it was absent. */
  enabled_before: true | null;
}

export type MitigationEvent =
  | DomainEvent<'PeerSessionsDisabled', { asn: number; sessions: DisabledSession[] }>
  /** Releases every session disabled for the AS; `restored` lists those turned back on (the others were gone or enabled by hand). */
  | DomainEvent<'PeerSessionsEnabled', { asn: number; restored: { node_id: string; session_id: number }[] }>;

/** Sessions a peer-disable turned off and no peer-enable has released yet, per AS. */
export type MitigationState = ReadonlyMap<number, readonly DisabledSession[]>;

export function evolveMitigations(state: MitigationState, event: MitigationEvent): MitigationState {
  const next = new Map(state);
  switch (event.type) {
    case 'PeerSessionsDisabled': {
      const known = next.get(event.data.asn) ?? [];
      const fresh = event.data.sessions.filter((s) => !known.some((k) => k.node_id === s.node_id && k.session_id === s.session_id));
      next.set(event.data.asn, [...known, ...fresh]);
      return next;
    }
    case 'PeerSessionsEnabled':
      next.delete(event.data.asn);
      return next;
  }
}

export const foldMitigations = (events: readonly MitigationEvent[]): MitigationState => events.reduce(evolveMitigations, new Map() as MitigationState);
