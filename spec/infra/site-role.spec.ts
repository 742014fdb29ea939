import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../infra/config.js';
import { openSystem, serve, type Running, type System } from '../../cli/system.js';
import { createLogger } from '../../infra/logger.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { ensureBuilt } from '../http/site/support.js';

describe('serve control site: the home site in the same process as the control server', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let dataDir: string;
  let system: System;
  let running: Running;

  before(async () => {
    await ensureBuilt();
    db = await createTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), 'site-role-'));
    // CONTROL_URL names an address nobody answers on (a public name this host cannot reach, say).
    const config = loadConfig({
      DATABASE_URL: db.url,
      LOG_LEVEL: 'silent',
      CONTROL_PORT: '0',
      SITE_PORT: '0',
      DATA_DIR: dataDir,
      CONTROL_URL: 'http://127.0.0.1:1',
    });
    system = await openSystem(config, createLogger('silent'));
    running = await serve(system, ['control', 'site']);
  });
  after(async () => {
    await running?.stop();
    await system?.close();
    await db?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('bakes the page from the control server next to it, while the browser is sent to CONTROL_URL', async () => {
    const site = running.servers.find((s) => s.role === 'site')!;
    const page = await (await fetch(`http://127.0.0.1:${site.port}/`)).text();
    // A snapshot was had (an empty fleet: zeros and a time), not the page without one (dashes, no time).
    expect(page).to.match(/data-stat="nodes_online">0</);
    expect(page).to.match(/<p class="asof">As of <time data-updated datetime="\d{4}-/);
    expect(page).to.include('data-control="http://127.0.0.1:1"');
  });
});
