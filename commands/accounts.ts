import { randomBytes, randomUUID } from 'node:crypto';
import { accountDecider, INVALID_CREDENTIALS, TOO_MANY_ATTEMPTS, type AccountCommand } from '../domain/account/decide.js';
import { accountStreamId, isUsername, type AccountEvent } from '../domain/account/events.js';
import { isBlocked, type AccountState } from '../domain/account/state.js';
import { fold } from '../domain/decider.js';
import { sha256Hex } from '../domain/sha256.js';
import { TooManyRequests, Unauthorized, Validation } from '../domain/errors.js';
import type { EventMetadata, EventStore } from '../infra/eventstore/types.js';
import type { PasswordHasher } from '../infra/passwords.js';
import { execute, handleCommand, type LoadedStream } from './handle.js';

export const MIN_PASSWORD_LENGTH = 8;

export interface AccountDeps {
  store: EventStore;
  passwords: PasswordHasher;
}

/** Creates an account; 409 when the name is taken, 422 for a bad name or a short password. */
export async function createAccount(deps: AccountDeps, input: { username: string; password: string; now: Date }, metadata: EventMetadata): Promise<void> {
  if (!isUsername(input.username)) throw new Validation('invalid username: 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit');
  checkPasswordLength(input.password);
  const passwordHash = await deps.passwords.hash(input.password);
  await handleCommand(
    deps.store,
    accountStreamId(input.username),
    accountDecider,
    { type: 'CreateAccount', username: input.username, passwordHash, now: input.now },
    metadata,
  );
}

export interface LoginInput {
  username: string;
  password: string;
  now: Date;
  sessionTtlMs: number;
}

/**
 * Checks a username and password and starts a session: 401 `invalid credentials`
 * for an unknown name or a wrong password alike, 429 `too many attempts` while
 * the name is blocked. The token is returned once; only its sha256 is stored.
 */
/** The audit details of a login and a password change. */
export const LOGIN_SUCCEEDED = 'login succeeded';
export const passwordChangedDetail = (revokedSessions: number): string => `password changed; ${revokedSessions} session(s) revoked`;

export async function login(deps: AccountDeps, input: LoginInput, metadata: EventMetadata): Promise<{ token: string; expiresAt: Date }> {
  if (!isUsername(input.username)) {
    // No account can have this name, so there is nothing to count; it still costs one verification.
    await verifyPassword(deps, undefined, input.password);
    throw new Unauthorized(INVALID_CREDENTIALS);
  }
  const streamId = accountStreamId(input.username);
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(input.now.getTime() + input.sessionTtlMs);
  // A retry after a version conflict re-verifies only if the hash changed meanwhile.
  let checked: { hash: string | undefined; ok: boolean } | undefined;
  const { result: ok } = await execute(
    deps.store,
    [streamId],
    async (streams) => {
      const state = stateOf(streams[streamId]);
      if (isBlocked(state, input.now)) throw new TooManyRequests(TOO_MANY_ATTEMPTS);
      const hash = state.status === 'Active' ? state.passwordHash : undefined;
      if (!checked || checked.hash !== hash) checked = { hash, ok: await verifyPassword(deps, hash, input.password) };
      const command: AccountCommand = checked.ok
        ? { type: 'RecordLoginSuccess', sessionId: randomUUID(), tokenSha256: sha256Hex(token), expiresAt, now: input.now }
        : { type: 'RecordLoginFailure', now: input.now };
      // A counted failure is a refusal: its audit entry is written with the 401, after the response.
      const audit = checked.ok ? { actor: input.username, detail: LOGIN_SUCCEEDED } : { refused: true };
      return { writes: [{ streamId, events: accountDecider.decide(command, state) }], result: checked.ok, audit };
    },
    metadata,
  );
  if (!ok) throw new Unauthorized(INVALID_CREDENTIALS);
  return { token, expiresAt };
}

/**
 * The one place a login password is checked: an unknown name is verified against
 * a dummy hash with the same argon2id parameters, so both refusals cost the same.
 */
async function verifyPassword(deps: AccountDeps, hash: string | undefined, password: string): Promise<boolean> {
  const ok = await deps.passwords.verify(hash ?? (await deps.passwords.dummyHash()), password);
  return ok && hash !== undefined;
}

/**
 * Changes the password of a signed-in account after checking the old one, and
 * revokes every live session of that account (the caller's included).
 */
export async function changePassword(
  deps: AccountDeps,
  input: { username: string; oldPassword: string; newPassword: string; now: Date },
  metadata: EventMetadata,
): Promise<{ revokedSessions: number }> {
  checkPasswordLength(input.newPassword, 'new_password');
  const streamId = accountStreamId(input.username);
  const newHash = await deps.passwords.hash(input.newPassword);
  let checked: { hash: string | undefined; ok: boolean } | undefined;
  const { result } = await execute(
    deps.store,
    [streamId],
    async (streams) => {
      const state = stateOf(streams[streamId]);
      const hash = state.status === 'Active' ? state.passwordHash : undefined;
      if (!checked || checked.hash !== hash) checked = { hash, ok: await verifyPassword(deps, hash, input.oldPassword) };
      if (!checked.ok) throw new Unauthorized(INVALID_CREDENTIALS);
      const events = accountDecider.decide({ type: 'ChangePassword', passwordHash: newHash, now: input.now }, state);
      const revoked = events.reduce((n, e) => n + (e.type === 'PasswordChanged' ? e.data.revoked_session_ids.length : 0), 0);
      return { writes: [{ streamId, events }], result: revoked, audit: { detail: passwordChangedDetail(revoked) } };
    },
    metadata,
  );
  return { revokedSessions: result };
}

function stateOf(stream: LoadedStream | undefined): AccountState {
  return fold(accountDecider, (stream?.events ?? []) as AccountEvent[]);
}

function checkPasswordLength(password: string, field = 'password'): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new Validation(`invalid ${field}: at least ${MIN_PASSWORD_LENGTH} characters`, [
      { loc: ['body', field], msg: `must have at least ${MIN_PASSWORD_LENGTH} characters`, type: 'minLength' },
    ]);
  }
}
