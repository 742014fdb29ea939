import { errors, type Account, type AccountClaims, type FindAccount } from 'oidc-provider';
import type { ApprovalRecord } from '../../../domain/identity/oauth-approval.js';
import type { Pool } from '../../../infra/db/pool.js';
import type { Logger } from '../../../infra/logger.js';
import { RegistryUnavailable, type RegistryClient, type ReplicaIdentity } from '../../../infra/registry/client.js';
import { approvalOf } from '../../../projections/oidc/queries.js';

/**
 * Which claim belongs to which scope (document 1, Tokens and claims): UserInfo
 * has `sub` and `preferred_username` always, `name` with profile, `email` with
 * email, `dn42` with dn42; the ID token adds, with dn42, `mnt_by`,
 * `auth_method`, `active_name` and `active_person`. No telephony claim exists.
 */
export const CLAIMS_OF_SCOPE = {
  openid: ['sub', 'preferred_username'],
  profile: ['name'],
  email: ['email'],
  dn42: ['dn42', 'mnt_by', 'auth_method', 'active_name', 'active_person'],
};

export interface AccountDeps {
  pool: Pool;
  registry: RegistryClient;
  log: Logger;
  now: () => Date;
}

/**
 * The account behind a token. Its `sub` is the sha256 of `<mntner>/<asn>`, so
 * the identity comes from the approval that created the token's grant. The
 * registry is asked live on every use: a maintainer that no longer maintains
 * the AS has no account any more (the token exchange answers `invalid_grant`,
 * UserInfo `invalid_token`), like a lapsed passkey login.
 */
export function findAccount(deps: AccountDeps): FindAccount {
  return (_ctx, sub, token) => accountOf(deps, sub, token);
}

/**
 * Accounts already resolved for a token object during its request. The code
 * exchange resolves the account before it consumes the code (see
 * `account-before-consumption.ts`); the provider then asks again, and must get
 * that same answer rather than a second registry call that might fail after
 * the code is spent. Token objects live for one request, so nothing outlives it.
 */
const resolved = new WeakMap<object, Account | undefined>();

/** `findAccount` for a token, resolved at most once per token object. */
export async function accountOf(deps: AccountDeps, sub: string, token: unknown): Promise<Account | undefined> {
  const key = typeof token === 'object' && token !== null ? token : undefined;
  if (key && resolved.has(key)) return resolved.get(key);
  const account = await lookUpAccount(deps, sub, token);
  if (key) resolved.set(key, account);
  return account;
}

async function lookUpAccount(deps: AccountDeps, sub: string, token: unknown): Promise<Account | undefined> {
  const grantId = (token as { grantId?: unknown } | undefined)?.grantId;
  if (typeof grantId !== 'string') return undefined;
  const approval = await approvalOf(deps.pool, grantId);
  if (!approval || approval.sub !== sub) return undefined;
  const identity = await liveIdentity(deps, approval.asn);
  if (!identity.mnt_by.includes(approval.mntner)) return undefined;
  const at = Math.floor(deps.now().getTime() / 1000);
  return { accountId: sub, claims: (use) => claimsOf(approval, identity, use, at) };
}

async function liveIdentity(deps: AccountDeps, asn: number): Promise<ReplicaIdentity> {
  try {
    return await deps.registry.identity(asn);
  } catch (err) {
    if (!(err instanceof RegistryUnavailable)) throw err;
    deps.log.warn({ err, asn }, 'registry replica unavailable for OIDC claims');
    throw Object.assign(new errors.TemporarilyUnavailable('registry replica unavailable'), { status: 503, statusCode: 503 });
  }
}

const present = <T extends Record<string, unknown>>(claims: T): Partial<T> =>
  Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;

/**
 * Every claim of the identity; the provider keeps those of the granted scopes.
 * `name` is the person's name (the as-name when the AS names no person);
 * `active_name` the as-name, `active_person` the person's handle; `dn42.timestamp`
 * is when the registry was asked (Unix seconds). `dn42.mnt` repeats `active_mnt`:
 * relying parties written for the other dn42 OpenID providers read the
 * maintainer there, so they work here by changing only the discovery URL.
 */
export function claimsOf(approval: ApprovalRecord, identity: ReplicaIdentity, use: string, at: number): AccountClaims {
  const base = {
    sub: approval.sub,
    ...present({ preferred_username: `AS${approval.asn}`, name: identity.name ?? identity.as_name, email: identity.email }),
    dn42: { asn: approval.asn, active_mnt: approval.mntner, mnt: approval.mntner, route: identity.route, route6: identity.route6, timestamp: at },
  };
  if (use !== 'id_token') return base;
  return { ...base, mnt_by: identity.mnt_by, auth_method: approval.method, ...present({ active_name: identity.as_name, active_person: identity.person }) };
}
