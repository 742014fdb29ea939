import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { advisoryKey, withTransaction } from './pool.js';

/**
 * A set of numbered, forward-only migrations owned by one module: files named
 * `NNNN_description.sql` in `dir`, applied in order, each in its own transaction.
 */
export interface MigrationSet {
  name: string;
  dir: string;
}

export interface MigrationReport {
  applied: string[];
}

const LOCK = advisoryKey('dn42-control:migrations');

export async function migrate(pool: pg.Pool, sets: readonly MigrationSet[]): Promise<MigrationReport> {
  const applied: string[] = [];
  // Several instances may start together: one migrates, the others wait and find nothing left.
  const lockClient = await pool.connect();
  try {
    await lockClient.query('SELECT pg_advisory_lock($1)', [LOCK]);
    await lockClient.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      set_name text NOT NULL, id text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (set_name, id))`);
    for (const set of sets) {
      const done = new Set((await lockClient.query('SELECT id FROM schema_migrations WHERE set_name = $1', [set.name])).rows.map((r) => r.id as string));
      for (const file of migrationFiles(set.dir)) {
        if (done.has(file)) continue;
        const sql = readFileSync(join(set.dir, file), 'utf8');
        await withTransaction(pool, async (client) => {
          await client.query(sql);
          await client.query('INSERT INTO schema_migrations (set_name, id) VALUES ($1, $2)', [set.name, file]);
        });
        applied.push(`${set.name}/${file}`);
      }
    }
  } finally {
    await lockClient.query('SELECT pg_advisory_unlock($1)', [LOCK]).catch(() => {});
    lockClient.release();
  }
  return { applied };
}

/** The migration files of a set's directory, in the order they are applied. */
export function migrationFiles(dir: string): string[] {
  const files = readdirSync(dir).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f));
  return files.sort();
}
