import type { Queryable } from '../../infra/db/pool.js';

export interface LiveSession {
  sessionId: string;
  username: string;
  expiresAt: Date;
}

/** The session a token hash names, if it is neither expired at `now` nor revoked. */
export async function findLiveSession(db: Queryable, tokenSha256: string, now: Date): Promise<LiveSession | undefined> {
  const result = await db.query(
    `SELECT session_id, username, expires_at FROM account_sessions
      WHERE token_sha256 = $1 AND revoked_at IS NULL AND expires_at > $2`,
    [tokenSha256, now],
  );
  const row = result.rows[0];
  return row ? { sessionId: row.session_id, username: row.username, expiresAt: new Date(row.expires_at) } : undefined;
}
