import { unreachable, type Decider, type DomainEvent } from '../decider.js';
import { Conflict, NotFound } from '../errors.js';

/**
 * A one-time enrollment token, in the stream `enrollment-token-<sha256 of the
 * secret>`. Keying the stream by the hash makes "this literal already exists" an
 * expected-version check, and lets `/agent/register` find the token from the
 * secret alone. The non-secret `token_id` names it in the admin API.
 */
export type EnrollmentTokenCreated = DomainEvent<
  'EnrollmentTokenCreated',
  { token_id: string; secret_sha256: string; node_id: string | null; description: string | null; expires_at: string | null; created_at: string }
>;
/** Spent by an accepted registration; a used token never works again. */
export type EnrollmentTokenUsed = DomainEvent<'EnrollmentTokenUsed', { token_id: string; node_id: string; registration_id: string; used_at: string }>;
export type EnrollmentTokenDeleted = DomainEvent<'EnrollmentTokenDeleted', { token_id: string; deleted_at: string }>;

export type EnrollmentEvent = EnrollmentTokenCreated | EnrollmentTokenUsed | EnrollmentTokenDeleted;
export const ENROLLMENT_EVENT_TYPES: readonly EnrollmentEvent['type'][] = ['EnrollmentTokenCreated', 'EnrollmentTokenUsed', 'EnrollmentTokenDeleted'];

export const enrollmentTokenStream = (secretSha256: string): string => `enrollment-token-${secretSha256}`;

export interface LiveEnrollmentToken {
  status: 'Live';
  token_id: string;
  node_id: string | null;
  expires_at: string | null;
  used_at: string | null;
}

/** A deleted token leaves the stream `Empty` again: the same literal may be created anew. */
export type EnrollmentState = { status: 'Empty' } | LiveEnrollmentToken;

export function evolveEnrollment(state: EnrollmentState, event: EnrollmentEvent): EnrollmentState {
  switch (event.type) {
    case 'EnrollmentTokenCreated': {
      const { token_id, node_id, expires_at } = event.data;
      return { status: 'Live', token_id, node_id, expires_at, used_at: null };
    }
    case 'EnrollmentTokenUsed':
      return state.status === 'Live' ? { ...state, used_at: event.data.used_at } : state;
    case 'EnrollmentTokenDeleted':
      return { status: 'Empty' };
    default:
      return unreachable(event);
  }
}

export type EnrollmentCommand =
  | {
      type: 'CreateEnrollmentToken';
      token_id: string;
      secret_sha256: string;
      node_id: string | null;
      description: string | null;
      expires_at: Date | null;
      now: Date;
    }
  | { type: 'UseEnrollmentToken'; registration_id: string; node_id: string; now: Date }
  | { type: 'DeleteEnrollmentToken'; token_id: string; now: Date };

export function decideEnrollment(command: EnrollmentCommand, state: EnrollmentState): EnrollmentEvent[] {
  switch (command.type) {
    case 'CreateEnrollmentToken': {
      if (state.status === 'Live') throw new Conflict('enrollment token already exists');
      const { token_id, secret_sha256, node_id, description } = command;
      return [
        {
          type: 'EnrollmentTokenCreated',
          data: { token_id, secret_sha256, node_id, description, expires_at: command.expires_at?.toISOString() ?? null, created_at: command.now.toISOString() },
        },
      ];
    }
    case 'UseEnrollmentToken': {
      // The caller has checked `usability` on the same state; this only records the use.
      if (state.status !== 'Live' || state.used_at !== null) throw new Conflict('enrollment token was used concurrently');
      return [
        {
          type: 'EnrollmentTokenUsed',
          data: { token_id: state.token_id, node_id: command.node_id, registration_id: command.registration_id, used_at: command.now.toISOString() },
        },
      ];
    }
    case 'DeleteEnrollmentToken':
      if (state.status !== 'Live' || state.token_id !== command.token_id) throw new NotFound(`unknown enrollment token ${command.token_id}`);
      return [{ type: 'EnrollmentTokenDeleted', data: { token_id: command.token_id, deleted_at: command.now.toISOString() } }];
    default:
      return unreachable(command);
  }
}

/** Why a presented table token cannot register `nodeId` now, or `ok` with whether it binds the node. */
export type Usability = { ok: true; token_id: string; bound: boolean } | { ok: false; reason: 'invalid' | 'mismatch' };

export function usability(state: EnrollmentState, nodeId: string, now: Date): Usability {
  if (state.status !== 'Live' || state.used_at !== null) return { ok: false, reason: 'invalid' };
  if (state.expires_at !== null && Date.parse(state.expires_at) <= now.getTime()) return { ok: false, reason: 'invalid' };
  if (state.node_id !== null && state.node_id !== nodeId) return { ok: false, reason: 'mismatch' };
  return { ok: true, token_id: state.token_id, bound: state.node_id !== null };
}

export const enrollmentDecider: Decider<EnrollmentCommand, EnrollmentEvent, EnrollmentState> = {
  initialState: () => ({ status: 'Empty' }),
  evolve: evolveEnrollment,
  decide: decideEnrollment,
};
