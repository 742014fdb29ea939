import { createRegistryApp } from '../../http/registry/app.js';
import { loadConfig } from '../../infra/config.js';
import { startApp, type TestSystem } from './system.js';

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
