import { loadConfig } from '../../../infra/config.js';
import { openSystem, serve, type Running, type System } from '../../../cli/system.js';
import { createLogger } from '../../../infra/logger.js';
import { readState } from '../../../infra/registry/store.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { eventually } from '../../support/wait.js';
import { RegistryRepo, registryEnv, rpsl, writeBaseRegistry } from '../../support/registry.js';

describe('Periodic registry sync of the registry role', function () {
  this.timeout(60_000);
  let repo: RegistryRepo;
  let db: TestDatabase;
  let system: System;
  let running: Running;

  before(async () => {
    repo = writeBaseRegistry(new RegistryRepo());
    repo.commit('base');
    db = await createTestDatabase();
    const config = loadConfig({ ...registryEnv(repo.dir), DATABASE_URL: db.url, LOG_LEVEL: 'silent', REGISTRY_PORT: '0', REGISTRY_SYNC_INTERVAL: '1' });
    system = await openSystem(config, createLogger('silent'));
    running = await serve(system, ['registry']);
  });
  after(async () => {
    await running?.stop();
    await system?.close();
    await db?.drop();
    repo?.destroy();
  });

  const until = (commit: string) =>
    eventually(async () => (await readState(system.pool))?.commit === commit, { timeoutMs: 10_000, what: `the loop loading ${commit}` });

  it('loads the upstream at start and each new commit within an interval', async () => {
    await until(repo.git('rev-parse', 'HEAD').trim());
    repo.put(
      'aut-num',
      'AS4242420042',
      rpsl([
        ['aut-num', 'AS4242420042'],
        ['as-name', 'LATE-AS'],
      ]),
    );
    const next = repo.commit('later');
    await until(next);
    // The event is appended right after the tables commit, so it may trail them by a moment.
    await eventually(async () => (await system.store.readStream('registry-sync')).some((e) => (e.data as { commit: string }).commit === next), {
      what: `a RegistrySynced event for ${next}`,
    });
  });
});
