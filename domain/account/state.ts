import type { AccountEvent } from './events.js';

/** Consecutive failures that start a block, and how long the block lasts. */
export const MAX_LOGIN_FAILURES = 5;
export const LOGIN_BLOCK_MS = 15 * 60_000;

export interface Throttle {
  /** Consecutive failures since the last success or block. */
  failures: number;
  blockedUntil: string | null;
}

export interface Session {
  id: string;
  expiresAt: string;
}

export type AccountState =
  { status: 'Absent'; throttle: Throttle } | { status: 'Active'; username: string; passwordHash: string; sessions: Session[]; throttle: Throttle };

export function initialState(): AccountState {
  return { status: 'Absent', throttle: { failures: 0, blockedUntil: null } };
}

export function evolve(state: AccountState, event: AccountEvent): AccountState {
  switch (event.type) {
    case 'AccountCreated':
      return { status: 'Active', username: event.data.username, passwordHash: event.data.password_hash, sessions: [], throttle: state.throttle };
    case 'LoginSucceeded': {
      const throttle = { failures: 0, blockedUntil: null };
      if (state.status !== 'Active') return { ...state, throttle };
      // Sessions that expired by now are dropped so the state stays small.
      const live = state.sessions.filter((s) => s.expiresAt > event.data.at);
      return { ...state, sessions: [...live, { id: event.data.session_id, expiresAt: event.data.expires_at }], throttle };
    }
    case 'LoginFailed':
      return { ...state, throttle: { ...state.throttle, failures: state.throttle.failures + 1 } };
    case 'LoginBlocked':
      return { ...state, throttle: { failures: 0, blockedUntil: event.data.until } };
    case 'PasswordChanged':
      if (state.status !== 'Active') return state;
      return { ...state, passwordHash: event.data.password_hash, sessions: [] };
    default: {
      const _never: never = event;
      return _never;
    }
  }
}

/** Whether logins are refused at `now` because of an unexpired block. */
export function isBlocked(state: AccountState, now: Date): boolean {
  return state.throttle.blockedUntil !== null && now.getTime() < Date.parse(state.throttle.blockedUntil);
}
