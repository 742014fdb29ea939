import type { Queryable } from '../../infra/db/pool.js';

export interface AuditEntry {
  id: number;
  actor: string;
  method: string;
  path: string;
  status_code: number;
  detail: string | null;
  created_at: string;
}

export async function listAuditEntries(db: Queryable, limit: number): Promise<AuditEntry[]> {
  const result = await db.query(`SELECT id, actor, method, path, status_code, detail, created_at FROM audit_log ORDER BY created_at DESC, id DESC LIMIT $1`, [
    limit,
  ]);
  return result.rows.map(auditEntryOf);
}

const auditEntryOf = (r: Record<string, any>): AuditEntry => ({
  id: Number(r.id),
  actor: r.actor,
  method: r.method,
  path: r.path,
  status_code: r.status_code,
  detail: r.detail,
  created_at: new Date(r.created_at).toISOString(),
});

/**
 * A page of the audit log newest first by id (the console's cursor, `/ui/audit`):
 * entries with an id below `beforeId`, and when `q` is given, those whose actor,
 * method or path contains it, ignoring case.
 */
export async function auditPage(db: Queryable, page: { limit: number; beforeId?: number; q?: string }): Promise<AuditEntry[]> {
  const result = await db.query(
    `SELECT id, actor, method, path, status_code, detail, created_at FROM audit_log
     WHERE ($1::bigint IS NULL OR id < $1)
       AND ($2::text IS NULL OR strpos(lower(actor), lower($2)) > 0 OR strpos(lower(method), lower($2)) > 0 OR strpos(lower(path), lower($2)) > 0)
     ORDER BY id DESC LIMIT $3`,
    [page.beforeId ?? null, page.q ?? null, page.limit],
  );
  return result.rows.map(auditEntryOf);
}
