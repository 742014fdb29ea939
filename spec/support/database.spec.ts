import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import pg from 'pg';
import type { MigrationSet } from '../../infra/db/migrate.js';
import { createTestDatabase, templateName, testServer } from './database.js';

describe('spec support: template databases', () => {
  let dir: string;
  let sets: MigrationSet[];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dn42-template-spec-'));
    await writeFile(join(dir, '0001_first.sql'), `CREATE TABLE first_table (id int PRIMARY KEY);`);
    await writeFile(join(dir, '0002_second.sql'), `CREATE TABLE second_table (id int PRIMARY KEY, note text);`);
    // A set of its own per test: the first test's template is not the second one's.
    sets = [{ name: `spec-${Date.now()}-${Math.random()}`, dir }];
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('names a template by its sets: the same sets, the same name', () => {
    expect(templateName(sets)).to.equal(templateName([{ ...sets[0] }]));
    expect(templateName(sets)).to.match(/^dn42_tpl_[0-9a-f]{24}$/);
  });

  it('names another template when a migration file changes, is added, or the sets are in another order', async () => {
    const before = templateName(sets);
    await writeFile(join(dir, '0002_second.sql'), `CREATE TABLE second_table (id int PRIMARY KEY, note varchar);`);
    const changed = templateName(sets);
    await writeFile(join(dir, '0003_third.sql'), `SELECT 1;`);
    const added = templateName(sets);
    const other: MigrationSet = { name: 'other', dir };
    expect(new Set([before, changed, added]).size).to.equal(3);
    expect(templateName([sets[0], other])).to.not.equal(templateName([other, sets[0]]));
  });

  it('copies a complete template that takes no connections of its own', async () => {
    const copies = [await createTestDatabase(sets), await createTestDatabase(sets)];
    try {
      for (const db of copies) {
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        try {
          const { rows } = await client.query(`SELECT id FROM schema_migrations ORDER BY id`);
          expect(rows.map((r) => r.id)).to.deep.equal(['0001_first.sql', '0002_second.sql']);
          await client.query(`INSERT INTO second_table (id, note) VALUES (1, 'mine')`);
        } finally {
          await client.end();
        }
      }
      const admin = new pg.Client({ connectionString: (await testServer()).adminUrl });
      await admin.connect();
      try {
        const name = templateName(sets);
        const { rows } = await admin.query(`SELECT datname, datallowconn FROM pg_database WHERE datname IN ($1, $2)`, [name, name.replace('_tpl_', '_tpb_')]);
        expect(rows).to.deep.equal([{ datname: name, datallowconn: false }]);
        await admin.query(`DROP DATABASE ${name}`); // this test's own template
      } finally {
        await admin.end();
      }
    } finally {
      for (const db of copies) await db.drop();
    }
  });
});
