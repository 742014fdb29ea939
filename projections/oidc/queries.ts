import type { ApprovalRecord } from '../../domain/identity/oauth-approval.js';
import type { Queryable } from '../../infra/db/pool.js';

/** An application as the provider and the administration see it (never its secret, only the hash). */
export interface ClientRow {
  client_id: string;
  name: string;
  redirect_uris: string[];
  confidential: boolean;
  secret_sha256: string | null;
}

/** A registered application that has not been deregistered. */
export async function activeClient(db: Queryable, clientId: string): Promise<ClientRow | undefined> {
  const { rows } = await db.query(
    `SELECT client_id, name, redirect_uris, confidential, secret_sha256 FROM oauth_clients WHERE client_id = $1 AND deregistered_at IS NULL`,
    [clientId],
  );
  return rows[0];
}

/** Every application still registered, oldest first. */
export async function activeClients(db: Queryable): Promise<ClientRow[]> {
  const { rows } = await db.query(
    `SELECT client_id, name, redirect_uris, confidential, secret_sha256 FROM oauth_clients WHERE deregistered_at IS NULL ORDER BY registered_at, client_id`,
  );
  return rows;
}

export interface ModelRow {
  payload: Record<string, unknown>;
}

/** One stored model instance by the sha256 of its id. */
export async function findModel(db: Queryable, model: string, key: string): Promise<ModelRow | undefined> {
  const { rows } = await db.query(`SELECT payload FROM oidc_models WHERE model = $1 AND key = $2`, [model, key]);
  return rows[0];
}

/** The instance of `model` whose `uid` (Session) or `userCode` (device flow) hashes to `key`, with its own key. */
export async function findModelBy(
  db: Queryable,
  model: string,
  column: 'uid_key' | 'user_code_key',
  key: string,
): Promise<(ModelRow & { key: string }) | undefined> {
  const { rows } = await db.query(`SELECT key, payload FROM oidc_models WHERE model = $1 AND ${column} = $2 LIMIT 1`, [model, key]);
  return rows[0];
}

/** The instances bound to a grant (of one model, or of all) or to an application. */
export async function modelsBoundTo(
  db: Queryable,
  bound: { grantId: string; model?: string } | { clientId: string },
): Promise<{ model: string; key: string }[]> {
  const { rows } =
    'grantId' in bound
      ? await db.query(`SELECT model, key FROM oidc_models WHERE grant_id = $1 AND ($2::text IS NULL OR model = $2) ORDER BY model, key`, [
          bound.grantId,
          bound.model ?? null,
        ])
      : await db.query(`SELECT model, key FROM oidc_models WHERE client_id = $1 ORDER BY model, key`, [bound.clientId]);
  return rows;
}

/** The approval behind a grant: who (maintainer, ASN, method) authorised it. */
export async function approvalOf(db: Queryable, grantId: string): Promise<ApprovalRecord | undefined> {
  const { rows } = await db.query(`SELECT *, approved_at AS at FROM oidc_approvals WHERE grant_id = $1`, [grantId]);
  const r = rows[0];
  return r && { ...r, asn: Number(r.asn), at: (r.at as Date).toISOString() };
}

/**
 * Deletes rows expired for longer than `graceSeconds` (a consumed code stays a
 * while after its expiry so a late replay still revokes its grant's tokens), and
 * approvals older than `approvalTtlSeconds` whose grant is gone. Returns how many.
 */
export async function pruneExpired(db: Queryable, now: Date, graceSeconds: number, approvalTtlSeconds: number): Promise<number> {
  const models = await db.query(`DELETE FROM oidc_models WHERE expires_at < $1`, [new Date(now.getTime() - graceSeconds * 1000)]);
  const approvals = await db.query(
    `DELETE FROM oidc_approvals a WHERE approved_at < $1 AND NOT EXISTS (SELECT 1 FROM oidc_models m WHERE m.model = 'Grant' AND m.grant_id = a.grant_id)`,
    [new Date(now.getTime() - approvalTtlSeconds * 1000)],
  );
  return (models.rowCount ?? 0) + (approvals.rowCount ?? 0);
}
