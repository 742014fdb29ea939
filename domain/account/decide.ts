import { Conflict, TooManyRequests, Unauthorized } from '../errors.js';
import type { Decider } from '../decider.js';
import type { AccountEvent } from './events.js';
import { evolve, initialState, isBlocked, LOGIN_BLOCK_MS, MAX_LOGIN_FAILURES, type AccountState } from './state.js';

export const INVALID_CREDENTIALS = 'invalid credentials';
export const TOO_MANY_ATTEMPTS = 'too many attempts';

/**
 * Commands carry what `decide` may not make itself: the time, the new session's
 * id and token hash, and password hashes (hashing is slow and salted, so it
 * happens before the command is decided).
 */
export type AccountCommand =
  | { type: 'CreateAccount'; username: string; passwordHash: string; now: Date }
  | { type: 'RecordLoginSuccess'; sessionId: string; tokenSha256: string; expiresAt: Date; now: Date }
  | { type: 'RecordLoginFailure'; now: Date }
  | { type: 'ChangePassword'; passwordHash: string; now: Date };

export function decide(command: AccountCommand, state: AccountState): AccountEvent[] {
  switch (command.type) {
    case 'CreateAccount':
      if (state.status === 'Active') throw new Conflict(`account ${command.username} already exists`);
      return [{ type: 'AccountCreated', data: { username: command.username, password_hash: command.passwordHash, created_at: command.now.toISOString() } }];
    case 'RecordLoginSuccess':
      if (isBlocked(state, command.now)) throw new TooManyRequests(TOO_MANY_ATTEMPTS);
      if (state.status !== 'Active') throw new Unauthorized(INVALID_CREDENTIALS);
      return [
        {
          type: 'LoginSucceeded',
          data: {
            session_id: command.sessionId,
            token_sha256: command.tokenSha256,
            expires_at: command.expiresAt.toISOString(),
            at: command.now.toISOString(),
          },
        },
      ];
    case 'RecordLoginFailure': {
      if (isBlocked(state, command.now)) throw new TooManyRequests(TOO_MANY_ATTEMPTS);
      const at = command.now.toISOString();
      const failed: AccountEvent = { type: 'LoginFailed', data: { at } };
      if (state.throttle.failures + 1 < MAX_LOGIN_FAILURES) return [failed];
      return [failed, { type: 'LoginBlocked', data: { until: new Date(command.now.getTime() + LOGIN_BLOCK_MS).toISOString(), at } }];
    }
    case 'ChangePassword': {
      if (state.status !== 'Active') throw new Unauthorized(INVALID_CREDENTIALS);
      const at = command.now.toISOString();
      const live = state.sessions.filter((s) => s.expiresAt > at).map((s) => s.id);
      return [{ type: 'PasswordChanged', data: { password_hash: command.passwordHash, revoked_session_ids: live, at } }];
    }
    default: {
      const _never: never = command;
      return _never;
    }
  }
}

export const accountDecider: Decider<AccountCommand, AccountEvent, AccountState> = { initialState, evolve, decide };
