import { fileURLToPath } from 'node:url';
import type { MigrationSet } from '../infra/db/migrate.js';
import type { Queryable } from '../infra/db/pool.js';

/** Sequences and other state the command layer owns (applied with the other migrations). */
export const commandMigrations: MigrationSet = { name: 'commands', dir: fileURLToPath(new URL('./migrations', import.meta.url)) };

export type IdKind = 'peering' | 'interface' | 'bgp_session' | 'autopeering_request';

const SEQUENCE: Record<IdKind, string> = {
  peering: 'peering_ids',
  interface: 'interface_ids',
  bgp_session: 'bgp_session_ids',
  autopeering_request: 'autopeering_request_ids',
};

/** Reserves `count` new ids. An id is never reused, even when its command fails. */
export async function nextIds(db: Queryable, kind: IdKind, count = 1): Promise<number[]> {
  if (count === 0) return [];
  const { rows } = await db.query(`SELECT nextval('${SEQUENCE[kind]}') AS id FROM generate_series(1, $1)`, [count]);
  return rows.map((r: { id: string }) => Number(r.id));
}
