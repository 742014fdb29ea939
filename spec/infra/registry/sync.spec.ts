import { expect } from 'chai';
import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { Conflict } from '../../../domain/errors.js';
import { loadConfig } from '../../../infra/config.js';
import { migrate } from '../../../infra/db/migrate.js';
import { runExclusive } from '../../../infra/db/singleton.js';
import * as q from '../../../infra/registry/queries.js';
import { readState, registryMigrations } from '../../../infra/registry/store.js';
import { RegistrySyncer, SYNC_JOB, SyncFailed } from '../../../infra/registry/sync.js';
import { ALPHA_KEY, BETA_FPR, RegistryRepo, registryEnv, rpsl, writeBaseRegistry } from '../../support/registry.js';
import { createTestSystem, type TestSystem } from '../../support/system.js';

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  expect.fail('expected a rejection');
}

describe('Registry sync', function () {
  this.timeout(60_000);
  let repo: RegistryRepo;
  let sys: TestSystem;
  let syncer: RegistrySyncer;
  let first: string;

  before(async () => {
    repo = writeBaseRegistry(new RegistryRepo());
    first = repo.commit('base');
    sys = await createTestSystem({ env: registryEnv(repo.dir) });
    await migrate(sys.pool, [registryMigrations]);
    syncer = new RegistrySyncer(sys.context);
  });
  after(async () => {
    await sys?.close();
    repo?.destroy();
  });

  const events = async () =>
    (await sys.store.readStream('registry-sync')).map((e) => e.data as { commit: string; counts: Record<string, number>; forced: boolean });

  it('loads the upstream HEAD, counts objects per class and records a RegistrySynced event', async () => {
    const result = await syncer.sync();
    expect(result).to.deep.include({ synced: true, commit: first, previous_commit: null });
    const counts = { 'aut-num': 3, mntner: 2, 'key-cert': 1, person: 3, role: 1, route: 2, route6: 1, inetnum: 1, inet6num: 1, malformed: 1 };
    expect(result.counts).to.deep.equal(counts);
    expect(await events()).to.deep.equal([{ commit: first, previous_commit: null, counts, duration_ms: result.duration_ms, forced: false }]);
    expect(await q.names(sys.pool, [4242420001, 4242420002, 4242420003, 1])).to.deep.equal({ 4242420001: 'ALPHA-AS', 4242420002: 'BETA-AS' });
    expect((await readState(sys.pool))?.recorded).to.equal(true);
  });

  it('answers synced=false for an unchanged commit and appends nothing', async () => {
    const result = await syncer.sync();
    expect(result).to.deep.include({ synced: false, commit: first });
    expect(await events()).to.have.length(1);
  });

  it('reloads an unchanged commit when forced', async () => {
    const result = await syncer.sync({ force: true });
    expect(result).to.deep.include({ synced: true, commit: first, previous_commit: first });
    expect((await events()).map((e) => e.forced)).to.deep.equal([false, true]);
  });

  it('keeps option ids across syncs while the options exist', async () => {
    const before = (await q.inSnapshot(sys.pool, (db) => q.options(db, 4242420001)))!.options;
    // Drop BETA-MNT's keys, move ALPHA-MNT's ssh key to the front, add an unrelated object.
    repo.put(
      'mntner',
      'BETA-MNT',
      rpsl([
        ['mntner', 'BETA-MNT'],
        ['admin-c', 'BETA-DN42'],
        ['auth', 'ssh-rsa garbage'],
        ['mnt-by', 'BETA-MNT'],
      ]),
    );
    const alpha = readFileSync(join(repo.dir, 'data/mntner/ALPHA-MNT'), 'utf8').split('\n');
    const sshLine = alpha.findIndex((l) => l.includes(ALPHA_KEY));
    alpha.splice(1, 0, ...alpha.splice(sshLine, 1));
    repo.put('mntner', 'ALPHA-MNT', alpha.join('\n'));
    repo.put(
      'aut-num',
      'AS4242420009',
      rpsl([
        ['aut-num', 'AS4242420009'],
        ['as-name', 'NEW-AS'],
        ['mnt-by', 'ALPHA-MNT'],
      ]),
    );
    const next = repo.commit('change');
    expect(await syncer.sync()).to.deep.include({ synced: true, commit: next, previous_commit: first });
    const after = (await q.inSnapshot(sys.pool, (db) => q.options(db, 4242420001)))!.options;
    const byId = (options: typeof before) => Object.fromEntries(options.map((o) => [o.id, o]));
    const gone = before.filter((o) => o.mntner === 'BETA-MNT' && o.kind !== 'email');
    expect(gone.map((o) => o.value)).to.include(BETA_FPR);
    expect(byId(after)).to.deep.equal(byId(before.filter((o) => !gone.includes(o))));
    expect(after[0].value).to.equal(ALPHA_KEY);
  });

  it('fails with the data kept when the upstream is gone', async () => {
    const state = await readState(sys.pool);
    const moved = `${repo.dir}-moved`;
    renameSync(repo.dir, moved);
    try {
      const err = await rejection(syncer.sync({ force: true }));
      expect(err).to.be.instanceOf(SyncFailed);
      expect((err as SyncFailed).detail).to.equal('registry upstream failed; the replica keeps its data');
    } finally {
      renameSync(moved, repo.dir);
    }
    expect((await readState(sys.pool))?.commit).to.equal(state?.commit);
    expect(await q.names(sys.pool, [4242420009])).to.deep.equal({ 4242420009: 'NEW-AS' });
  });

  it('gives up after its time bound with the data kept', async () => {
    const eventCount = (await events()).length;
    const hurried = new RegistrySyncer(sys.context, { timeoutMs: 1 });
    const err = await rejection(hurried.sync({ force: true }));
    expect(err).to.be.instanceOf(SyncFailed);
    expect((err as SyncFailed).detail).to.match(/timed out/);
    expect(await events()).to.have.length(eventCount);
  });

  it('refuses to run while another instance holds the sync job', async () => {
    let release!: () => void;
    const held = new Promise<void>((res) => (release = res));
    let locked!: () => void;
    const isLocked = new Promise<void>((res) => (locked = res));
    const other = runExclusive(sys.pool, SYNC_JOB, async () => {
      locked();
      await held;
    });
    await isLocked;
    const err = await rejection(syncer.sync({ force: true }));
    release();
    expect(await other).to.equal(true);
    expect(err).to.be.instanceOf(Conflict);
    expect(err.message).to.equal('a registry sync is already running');
  });

  it('needs REGISTRY_UPSTREAM_TOKEN for an https source and never contacts it without one', async () => {
    const config = loadConfig({
      ...process.env,
      REGISTRY_SOURCE: 'https://git.example.invalid/dn42/registry.git',
      DATABASE_URL: sys.db.url,
      LOG_LEVEL: 'silent',
    });
    const err = await rejection(new RegistrySyncer({ ...sys.context, config }).sync());
    expect(err).to.be.instanceOf(Conflict);
    expect(err.message).to.equal('the registry upstream needs a token: REGISTRY_UPSTREAM_TOKEN is not configured');
  });

  it('refuses to sync without a source', async () => {
    const config = loadConfig({ DATABASE_URL: sys.db.url, LOG_LEVEL: 'silent' });
    const err = await rejection(new RegistrySyncer({ ...sys.context, config }).sync());
    expect(err).to.be.instanceOf(Conflict);
    expect(err.message).to.equal('registry sync is disabled: REGISTRY_SOURCE is not configured');
  });

  it('appends the event of a load whose event was lost before the next round', async () => {
    const state = (await readState(sys.pool))!;
    await sys.pool.query('UPDATE registry_state SET recorded = false');
    const count = (await events()).length;
    expect(await syncer.sync()).to.deep.include({ synced: false });
    const all = await events();
    expect(all).to.have.length(count + 1);
    expect(all[all.length - 1].commit).to.equal(state.commit);
    expect((await readState(sys.pool))?.recorded).to.equal(true);
  });
});
