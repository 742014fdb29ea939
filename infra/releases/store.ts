import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import type { ReleaseFile, ReleaseManifest } from '../../domain/release/manifest.js';
import type { MigrationSet } from '../db/migrate.js';
import { withTransaction, type Queryable } from '../db/pool.js';

export const releaseMigrations: MigrationSet = { name: 'agent-releases', dir: fileURLToPath(new URL('./migrations', import.meta.url)) };

export interface StoredFile extends ReleaseFile {
  content: Buffer;
}

/** Stores a release, replacing every file of an earlier upload of the same version. */
export async function saveRelease(pool: pg.Pool, version: string, files: readonly StoredFile[], now: Date): Promise<void> {
  await withTransaction(pool, async (tx) => {
    await tx.query(`INSERT INTO agent_releases (version, uploaded_at) VALUES ($1, $2) ON CONFLICT (version) DO UPDATE SET uploaded_at = EXCLUDED.uploaded_at`, [
      version,
      now,
    ]);
    await tx.query(`DELETE FROM agent_release_files WHERE version = $1`, [version]);
    for (const f of files) {
      await tx.query(`INSERT INTO agent_release_files (version, filename, sha256, size, content) VALUES ($1, $2, $3, $4, $5)`, [
        version,
        f.filename,
        f.sha256,
        f.size,
        f.content,
      ]);
    }
  });
}

/** The manifest of a version (files by name, byte order whatever the database collation), or undefined when it was never uploaded. */
export async function manifestOf(db: Queryable, version: string): Promise<ReleaseManifest | undefined> {
  const { rows } = await db.query(
    `SELECT r.version, f.filename, f.sha256, f.size FROM agent_releases r
       LEFT JOIN agent_release_files f USING (version) WHERE r.version = $1 ORDER BY f.filename COLLATE "C"`,
    [version],
  );
  if (rows.length === 0) return undefined;
  return { version, wheels: rows.filter((r) => r.filename !== null).map((r) => ({ filename: r.filename, sha256: r.sha256, size: r.size })) };
}

export async function releaseFile(db: Queryable, version: string, filename: string): Promise<Buffer | undefined> {
  const { rows } = await db.query(`SELECT content FROM agent_release_files WHERE version = $1 AND filename = $2`, [version, filename]);
  return rows[0]?.content;
}

/** Uploaded versions, oldest first by numeric order. */
export async function releaseVersions(db: Queryable): Promise<string[]> {
  const { rows } = await db.query(`SELECT version FROM agent_releases`);
  return rows.map((r: { version: string }) => r.version);
}

export async function targetVersion(db: Queryable): Promise<string | null> {
  const { rows } = await db.query(`SELECT version FROM agent_release_target`);
  return rows[0]?.version ?? null;
}

/** Numeric order of two `x.y.z` version columns (each part at most 9 digits). */
const numeric = (column: string) => `string_to_array(${column}, '.')::bigint[]`;

/**
 * Sets the global target unless it would go backwards, in one statement (two
 * administrators racing cannot lower it): `set`, `not_uploaded`, or `below`
 * with the current target.
 */
export async function saveTarget(
  db: Queryable,
  version: string,
  now: Date,
): Promise<{ outcome: 'set' | 'not_uploaded' } | { outcome: 'below'; current: string }> {
  const { rowCount } = await db.query(
    `INSERT INTO agent_release_target (version, set_at) SELECT version, $2 FROM agent_releases WHERE version = $1
     ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version, set_at = EXCLUDED.set_at
     WHERE ${numeric('EXCLUDED.version')} >= ${numeric('agent_release_target.version')}`,
    [version, now],
  );
  if ((rowCount ?? 0) > 0) return { outcome: 'set' };
  const current = await targetVersion(db);
  if (current === null || !(await manifestOf(db, version))) return { outcome: 'not_uploaded' };
  return { outcome: 'below', current };
}

/**
 * Claims the one `agent_update_available` offer of `version` to the node. True
 * for exactly one caller, across reconnects and instances.
 */
export async function claimOffer(db: Queryable, nodeId: string, version: string, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(`INSERT INTO agent_update_offers (node_id, version, offered_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
    nodeId,
    version,
    now,
  ]);
  return (rowCount ?? 0) > 0;
}

/** Gives a claimed offer back (it reached no connection). */
export async function releaseOffer(db: Queryable, nodeId: string, version: string): Promise<void> {
  await db.query(`DELETE FROM agent_update_offers WHERE node_id = $1 AND version = $2`, [nodeId, version]);
}

/** Re-arms the offers of a version (setting it as the target again lets an operator retry). */
export async function clearOffers(db: Queryable, version: string): Promise<void> {
  await db.query(`DELETE FROM agent_update_offers WHERE version = $1`, [version]);
}
