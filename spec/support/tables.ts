import type { Queryable } from '../../infra/db/pool.js';

/** Every row of a table as JSON, in a stable order: for comparing read models row by row. */
export async function tableRows(db: Queryable, table: string, orderBy: string): Promise<unknown[]> {
  const { rows } = await db.query(`SELECT to_jsonb(t) AS row FROM ${table} t ORDER BY ${orderBy}`);
  return rows.map((r: { row: unknown }) => r.row);
}

/** Polls `check` until it returns true; fails with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
  everyMs = 25,
  explain?: () => Promise<string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${explain ? `: ${await explain()}` : ''}`);
    await new Promise((res) => setTimeout(res, everyMs));
  }
}
