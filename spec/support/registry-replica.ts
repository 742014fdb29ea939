import { createRegistryApp } from '../../http/registry/app.js';
import { loadConfig } from '../../infra/config.js';
import { migrate } from '../../infra/db/migrate.js';
import { registryMigrations } from '../../infra/registry/store.js';
import { RegistryRepo, registryEnv, writeBaseRegistry } from './registry.js';
import { createTestSystem, startApp, type TestSystem } from './system.js';

/**
 * A registry replica service on `sys`'s database (its registry migrations
 * applied), reading the registry at `source`, serving sister services that
 * present `serviceToken`. Close it with the answer's `close`.
 */
export function startRegistryReplica(sys: TestSystem, source: string, serviceToken: string): ReturnType<typeof startApp> {
  return startApp(
    createRegistryApp({
      ...sys.context,
      config: loadConfig({
        DATABASE_URL: sys.db.url,
        LOG_LEVEL: 'silent',
        REGISTRY_SERVICE_TOKEN: serviceToken,
        REGISTRY_SOURCE: source,
        DATA_DIR: sys.config.dataDir,
      }),
    }),
  );
}

/**
 * A registry replica of its own, on a database of its own, over the base test
 * registry (`writeBaseRegistry`): for specs that only need names looked up.
 * `close` stops the replica, drops its system and removes the registry checkout.
 */
export async function startBaseRegistryReplica(serviceToken: string): Promise<{ url: string; close(): Promise<void> }> {
  const repo = writeBaseRegistry(new RegistryRepo());
  repo.commit('base');
  const registry = await createTestSystem({ projections: [], env: registryEnv(repo.dir, { REGISTRY_SERVICE_TOKEN: serviceToken }) });
  try {
    await migrate(registry.pool, [registryMigrations]);
    const replica = await startRegistryReplica(registry, repo.dir, serviceToken);
    return {
      url: replica.url,
      close: async () => {
        await replica.close();
        await registry.close();
        repo.destroy();
      },
    };
  } catch (err) {
    await registry.close();
    repo.destroy();
    throw err;
  }
}
