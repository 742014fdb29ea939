import type { Queryable } from '../db/pool.js';

/**
 * NOTIFY channel on which a revoked (or rotated) agent token's id is announced,
 * so that every instance closes the token's open sockets at once. A hint only:
 * each instance also re-checks the tokens of its open sockets periodically.
 */
export const TOKEN_REVOKED_CHANNEL = 'dn42_agent_token_revoked';

/** Announces a revoked token to every instance, this one included (its listener hears it too). */
export async function announceRevoked(db: Queryable, tokenId: string): Promise<void> {
  await db.query(`SELECT pg_notify($1, $2)`, [TOKEN_REVOKED_CHANNEL, tokenId]);
}

/** Of `tokenIds`, those that no longer resolve at `now`: unknown, revoked or expired. */
export async function invalidTokens(db: Queryable, tokenIds: readonly string[], now: Date): Promise<string[]> {
  if (tokenIds.length === 0) return [];
  const { rows } = await db.query(
    `SELECT id FROM unnest($1::text[]) AS t(id)
      WHERE NOT EXISTS (SELECT 1 FROM agent_tokens a WHERE a.token_id = t.id AND a.revoked_at IS NULL AND (a.expires_at IS NULL OR a.expires_at > $2))`,
    [tokenIds, now],
  );
  return rows.map((r: { id: string }) => r.id);
}
