import type { Queryable } from '../../infra/db/pool.js';

/** Every row of a table as JSON, in a stable order: for comparing read models row by row. */
export async function tableRows(db: Queryable, table: string, orderBy: string): Promise<unknown[]> {
  const { rows } = await db.query(`SELECT to_jsonb(t) AS row FROM ${table} t ORDER BY ${orderBy}`);
  return rows.map((r: { row: unknown }) => r.row);
}
