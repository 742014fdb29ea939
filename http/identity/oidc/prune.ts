import type { Queryable } from '../../../infra/db/pool.js';
import { pruneExpired } from '../../../projections/oidc/queries.js';
import { REFRESH_TOKEN_CAP } from './configuration.js';

/**
 * How long an expired row is kept: a day, so that replaying a code (120 s)
 * within a day still finds it consumed and revokes its grant's tokens; after
 * that the replay only gets `invalid_grant`.
 */
export const OIDC_PRUNE_GRACE_SECONDS = 24 * 60 * 60;

/**
 * The housekeeping step of the provider's storage (one instance at a time, in
 * the housekeeping job): deletes expired grants, codes and tokens, and the
 * approvals of grants that are gone. Their events stay in the store; a rebuild
 * brings the rows back until the next round prunes them again.
 */
export function pruneOidcStorage(db: Queryable, now: Date): Promise<number> {
  return pruneExpired(db, now, OIDC_PRUNE_GRACE_SECONDS, REFRESH_TOKEN_CAP + OIDC_PRUNE_GRACE_SECONDS);
}
