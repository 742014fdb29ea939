import { Conflict, NotFound } from '../errors.js';
import {
  MAINTAINER_PASSKEY_EVENTS,
  evolvePasskeys,
  initialPasskeys,
  type MaintainerEvent,
  type MaintainerPasskeys,
  type PasskeyRegistered,
} from './passkeys.js';
import type { DomainEvent } from '../decider.js';

export const PASSKEY_ALREADY_REGISTERED = 'passkey already registered';
export const PASSKEY_NOT_FOUND = 'passkey not found';

export type PasskeyCommand =
  | { type: 'RegisterPasskey'; passkey: Omit<PasskeyRegistered['data'], 'registered_at'>; now: Date }
  | { type: 'RemovePasskey'; credentialId: string; now: Date }
  | { type: 'RecordPasskeyUse'; credentialId: string; counter: number; now: Date }
  | { type: 'ReclaimPasskeys'; now: Date };

/** Folds the passkey events of a maintainer stream (other events of the stream are skipped). */
export function foldPasskeys(events: readonly DomainEvent[]): MaintainerPasskeys {
  return events.filter((e) => MAINTAINER_PASSKEY_EVENTS.includes(e.type)).reduce((s, e) => evolvePasskeys(s, e as MaintainerEvent), initialPasskeys());
}

export function decidePasskeys(command: PasskeyCommand, state: MaintainerPasskeys): MaintainerEvent[] {
  const at = command.now.toISOString();
  switch (command.type) {
    case 'RegisterPasskey':
      if (state.credentials.has(command.passkey.credential_id)) throw new Conflict(PASSKEY_ALREADY_REGISTERED);
      return [{ type: 'PasskeyRegistered', data: { ...command.passkey, registered_at: at } }];
    case 'RemovePasskey':
      if (!state.credentials.has(command.credentialId)) throw new NotFound(PASSKEY_NOT_FOUND);
      return [{ type: 'PasskeyRemoved', data: { credential_id: command.credentialId, at } }];
    case 'RecordPasskeyUse': {
      const stored = state.credentials.get(command.credentialId);
      if (!stored) throw new NotFound(PASSKEY_NOT_FOUND);
      // Two logins verified against the same stored counter may be recorded in either order: the counter never goes back.
      return [{ type: 'PasskeyUsed', data: { credential_id: command.credentialId, counter: Math.max(stored.counter, command.counter), at } }];
    }
    case 'ReclaimPasskeys':
      if (state.credentials.size === 0) return [];
      return [{ type: 'PasskeysReclaimed', data: { credential_ids: [...state.credentials.keys()], at } }];
    default: {
      const _never: never = command;
      return _never;
    }
  }
}
