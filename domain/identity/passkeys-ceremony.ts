import type { DomainEvent } from '../decider.js';
import { Gone, NotFound } from '../errors.js';

/**
 * A passkey ceremony (registration or login) in `passkey-ceremony-<id>`: started
 * with the challenge the browser must sign, consumed by the first finish. A
 * consumed or unknown ceremony is 404, one older than 5 minutes is 410.
 */
export const CEREMONY_LIFETIME_MS = 5 * 60 * 1000;
export const CEREMONY_NOT_FOUND = 'ceremony not found';
export const CEREMONY_EXPIRED = 'ceremony expired';

export type CeremonyKind = 'registration' | 'authentication';

export type PasskeyCeremonyStarted = DomainEvent<
  'PasskeyCeremonyStarted',
  {
    ceremony_id: string;
    kind: CeremonyKind;
    challenge: string;
    /** Registration: the maintainer of the session that began it. */
    mntner?: string;
    /** Authentication: the ASN to log in to and the credentials offered for it, with their maintainers. */
    asn?: number;
    allowed?: { credential_id: string; mntner: string }[];
    started_at: string;
    expires_at: string;
  }
>;
export type PasskeyCeremonyConsumed = DomainEvent<'PasskeyCeremonyConsumed', { at: string }>;
export type CeremonyEvent = PasskeyCeremonyStarted | PasskeyCeremonyConsumed;

export type CeremonyState =
  { status: 'Empty' } | { status: 'Started'; ceremony: PasskeyCeremonyStarted['data'] } | { status: 'Consumed'; ceremony: PasskeyCeremonyStarted['data'] };

export type CeremonyCommand =
  | { type: 'StartCeremony'; ceremony: Omit<PasskeyCeremonyStarted['data'], 'started_at' | 'expires_at'>; now: Date }
  | { type: 'ConsumeCeremony'; kind: CeremonyKind; mntner?: string; now: Date };

export function ceremonyStreamId(id: string): string {
  return `passkey-ceremony-${id}`;
}

export function evolveCeremony(state: CeremonyState, event: CeremonyEvent): CeremonyState {
  switch (event.type) {
    case 'PasskeyCeremonyStarted':
      return { status: 'Started', ceremony: event.data };
    case 'PasskeyCeremonyConsumed':
      return state.status === 'Empty' ? state : { status: 'Consumed', ceremony: state.ceremony };
    default: {
      const _never: never = event;
      return _never;
    }
  }
}

export function foldCeremony(events: readonly DomainEvent[]): CeremonyState {
  return (events as CeremonyEvent[]).reduce(evolveCeremony, { status: 'Empty' } as CeremonyState);
}

export function decideCeremony(command: CeremonyCommand, state: CeremonyState): CeremonyEvent[] {
  switch (command.type) {
    case 'StartCeremony': {
      const started = command.now.toISOString();
      const expires = new Date(command.now.getTime() + CEREMONY_LIFETIME_MS).toISOString();
      return [{ type: 'PasskeyCeremonyStarted', data: { ...command.ceremony, started_at: started, expires_at: expires } }];
    }
    case 'ConsumeCeremony': {
      // Another kind, or another maintainer's registration, is somebody else's ceremony: not found.
      if (state.status !== 'Started' || state.ceremony.kind !== command.kind) throw new NotFound(CEREMONY_NOT_FOUND);
      if (command.kind === 'registration' && state.ceremony.mntner !== command.mntner) throw new NotFound(CEREMONY_NOT_FOUND);
      if (command.now.getTime() >= Date.parse(state.ceremony.expires_at)) throw new Gone(CEREMONY_EXPIRED);
      return [{ type: 'PasskeyCeremonyConsumed', data: { at: command.now.toISOString() } }];
    }
    default: {
      const _never: never = command;
      return _never;
    }
  }
}
