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
  const result = await db.query(
    `SELECT id, actor, method, path, status_code, detail, created_at FROM audit_log ORDER BY created_at DESC, id DESC LIMIT $1`,
    [limit],
  );
  return result.rows.map((r) => ({
    id: Number(r.id),
    actor: r.actor,
    method: r.method,
    path: r.path,
    status_code: r.status_code,
    detail: r.detail,
    created_at: new Date(r.created_at).toISOString(),
  }));
}
