import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { RegistrySnapshot } from '../../domain/registry/snapshot.js';
import { roaSetEtag } from '../../domain/rpki/roa.js';
import type { MigrationSet } from '../db/migrate.js';
import { withTransaction, type Queryable } from '../db/pool.js';

export const registryMigrations: MigrationSet = { name: 'registry-replica', dir: fileURLToPath(new URL('./migrations', import.meta.url)) };

/**
 * What a load writes. 2: ROAs (`registry_roas`). A state of an older format is
 * loaded again by the next sync, whatever the upstream did.
 */
export const LOAD_FORMAT = 2;

/** The replica's own record of what it holds (one row, absent before the first sync). */
export interface RegistryState {
  commit: string;
  previousCommit: string | null;
  counts: Record<string, number>;
  syncedAt: Date;
  checkedAt: Date;
  durationMs: number;
  forced: boolean;
  /** Whether the RegistrySynced event of this load has been appended. */
  recorded: boolean;
  /** `LOAD_FORMAT` of the load that wrote the tables. */
  loadFormat: number;
}

export async function readState(db: Queryable): Promise<RegistryState | null> {
  const { rows } = await db.query('SELECT * FROM registry_state');
  const row = rows[0];
  if (!row) return null;
  return {
    commit: row.commit,
    previousCommit: row.previous_commit,
    counts: row.counts,
    syncedAt: row.synced_at,
    checkedAt: row.checked_at,
    durationMs: row.duration_ms,
    forced: row.forced,
    recorded: row.recorded,
    loadFormat: row.load_format,
  };
}

/** Tables a sync rewrites, in the order it fills them. */
const TABLES = [
  'registry_aut_nums',
  'registry_mntners',
  'registry_auth_options',
  'registry_contacts',
  'registry_key_certs',
  'registry_routes',
  'registry_roas',
] as const;

/**
 * Replaces every replica table with the snapshot, in one transaction: readers
 * keep seeing the previous commit until it commits, then see the new one whole.
 * DELETE rather than TRUNCATE, because TRUNCATE's exclusive lock would make
 * readers wait for the whole load instead of reading the old rows. Each table is
 * filled by one INSERT from a JSON array (`jsonb_to_recordset`).
 */
export async function replaceSnapshot(
  pool: pg.Pool,
  snapshot: RegistrySnapshot,
  state: Omit<RegistryState, 'recorded' | 'checkedAt' | 'loadFormat'>,
  options: { timeoutMs: number; beforeCommit?: () => Promise<void> },
): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query(`SELECT set_config('statement_timeout', $1, true)`, [String(Math.max(1, Math.floor(options.timeoutMs)))]);
    for (const table of TABLES) await tx.query(`DELETE FROM ${table}`);
    await insertRows(
      tx,
      'registry_aut_nums',
      'asn bigint, as_name text, descr text, mnt_by text[], admin_c text[], tech_c text[], org text',
      snapshot.autNums.map((a) => ({ asn: a.asn, as_name: a.asName, descr: a.descr, mnt_by: a.mntBy, admin_c: a.adminC, tech_c: a.techC, org: a.org })),
    );
    await insertRows(
      tx,
      'registry_mntners',
      'name text, descr text, mnt_by text[], admin_c text[], tech_c text[], auth text[]',
      snapshot.mntners.map((m) => ({ name: m.name, descr: m.descr, mnt_by: m.mntBy, admin_c: m.adminC, tech_c: m.techC, auth: m.auth })),
    );
    await insertRows(
      tx,
      'registry_auth_options',
      'mntner text, ordinal integer, id text, kind text, method text, value text, comment text, hardware_key boolean',
      snapshot.authOptions.map((o, ordinal) => ({ ...o, ordinal })),
    );
    await insertRows(tx, 'registry_contacts', 'handle text, kind text, name text, emails text[]', snapshot.contacts);
    await insertRows(
      tx,
      'registry_key_certs',
      'name text, fingerprint text, method text, owner text[], armor text, mnt_by text[]',
      snapshot.keyCerts.map((k) => ({ name: k.name, fingerprint: k.fingerprint, method: k.method, owner: k.owner, armor: k.armor, mnt_by: k.mntBy })),
    );
    await insertRows(
      tx,
      'registry_routes',
      'prefix inet, family smallint, origin bigint',
      snapshot.routes.flatMap((r) => r.origins.map((origin) => ({ prefix: r.prefix, family: r.family, origin }))),
      'ON CONFLICT DO NOTHING',
    );
    await insertRows(
      tx,
      'registry_roas',
      'prefix text, max_length smallint, origin bigint',
      snapshot.roas.map((r) => ({ prefix: r.prefix, max_length: r.max_length, origin: r.asn })),
    );
    await tx.query(
      `INSERT INTO registry_state (singleton, commit, previous_commit, counts, synced_at, checked_at, duration_ms, forced, recorded, load_format, roas_etag)
       VALUES (true, $1, $2, $3, $4, $4, $5, $6, false, $7, $8)
       ON CONFLICT (singleton) DO UPDATE SET commit = EXCLUDED.commit, previous_commit = EXCLUDED.previous_commit, counts = EXCLUDED.counts,
         synced_at = EXCLUDED.synced_at, checked_at = EXCLUDED.checked_at, duration_ms = EXCLUDED.duration_ms, forced = EXCLUDED.forced, recorded = false,
         load_format = EXCLUDED.load_format, roas_etag = EXCLUDED.roas_etag`,
      [
        state.commit,
        state.previousCommit,
        JSON.stringify(state.counts),
        state.syncedAt,
        state.durationMs,
        state.forced,
        LOAD_FORMAT,
        roaSetEtag(snapshot.roas),
      ],
    );
    await options.beforeCommit?.();
  });
}

/** All rows of a table in one statement: the rows travel as one JSON array parameter. */
async function insertRows(tx: Queryable, table: string, columns: string, rows: readonly object[], suffix = ''): Promise<void> {
  if (rows.length === 0) return;
  const names = columns
    .split(',')
    .map((c) => c.trim().split(' ')[0])
    .join(', ');
  await tx.query(`INSERT INTO ${table} (${names}) SELECT ${names} FROM jsonb_to_recordset($1::jsonb) AS r(${columns}) ${suffix}`, [JSON.stringify(rows)]);
}

export async function markRecorded(db: Queryable, commit: string): Promise<void> {
  await db.query('UPDATE registry_state SET recorded = true WHERE commit = $1', [commit]);
}

export async function markChecked(db: Queryable, at: Date): Promise<void> {
  await db.query('UPDATE registry_state SET checked_at = $1', [at]);
}
