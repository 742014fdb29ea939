import { expect } from 'chai';
import { loadConfig } from '../../../infra/config.js';
import { openSystem, serve, type Running, type System } from '../../../infra/cli/system.js';
import { createLogger } from '../../../infra/logger.js';
import { readState } from '../../../infra/registry/store.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
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

  async function until(commit: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if ((await readState(system.pool))?.commit === commit) return;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect.fail(`the loop never loaded ${commit}`);
  }

  it('loads the upstream at start and each new commit within an interval', async () => {
    await until(repo.git('rev-parse', 'HEAD').trim());
    repo.put('aut-num', 'AS4242420042', rpsl([['aut-num', 'AS4242420042'], ['as-name', 'LATE-AS']]));
    const next = repo.commit('later');
    await until(next);
    // The event is appended right after the tables commit, so it may trail them by a moment.
    for (let i = 0; i < 100; i++) {
      const events = await system.store.readStream('registry-sync');
      if (events.some((e) => (e.data as { commit: string }).commit === next)) return;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect.fail(`no RegistrySynced event for ${next}`);
  });
});
