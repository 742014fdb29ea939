import { settleDrops, stopTestServer } from './database.js';

/** Mocha global teardown: waits for the test databases' drops, then stops the embedded test PostgreSQL if one was started. */
export async function mochaGlobalTeardown(): Promise<void> {
  await settleDrops();
  await stopTestServer();
}
