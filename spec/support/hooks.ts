import { stopTestServer } from './database.js';

/** Mocha global teardown: stops the embedded test PostgreSQL if one was started. */
export async function mochaGlobalTeardown(): Promise<void> {
  await stopTestServer();
}
