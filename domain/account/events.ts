import type { DomainEvent } from '../decider.js';

/**
 * An operator account of the control server, in the `account-<username>` stream.
 * The stream also counts failed logins for a name that has no account, so that an
 * unknown name is throttled exactly like a known one (no enumeration through 429).
 * Passwords never appear here: only their argon2id hash, and only the sha256 of
 * session tokens.
 */
export type AccountCreated = DomainEvent<'AccountCreated', { username: string; password_hash: string; created_at: string }>;

/** A login succeeded and started a session. Resets the failure count. */
export type LoginSucceeded = DomainEvent<'LoginSucceeded', { session_id: string; token_sha256: string; expires_at: string; at: string }>;

/** A login was refused for its credentials (unknown name or wrong password). */
export type LoginFailed = DomainEvent<'LoginFailed', { at: string }>;

/** Too many consecutive failures: logins are refused until `until`. The count starts over. */
export type LoginBlocked = DomainEvent<'LoginBlocked', { until: string; at: string }>;

/** New password; every session that was still live is revoked with it. */
export type PasswordChanged = DomainEvent<'PasswordChanged', { password_hash: string; revoked_session_ids: string[]; at: string }>;

export type AccountEvent = AccountCreated | LoginSucceeded | LoginFailed | LoginBlocked | PasswordChanged;

/** Names an account can have: they become stream ids and audit actors. */
export const USERNAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

export function isUsername(name: string): boolean {
  return USERNAME_PATTERN.test(name);
}

export function accountStreamId(username: string): string {
  return `account-${username}`;
}
