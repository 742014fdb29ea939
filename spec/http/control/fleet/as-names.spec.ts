import { expect } from 'chai';
import { createControlApp } from '../../../../http/control/app.js';
import { loadConfig } from '../../../../infra/config.js';
import { migrate } from '../../../../infra/db/migrate.js';
import { registryMigrations } from '../../../../infra/registry/store.js';
import { api } from '../../../support/http.js';
import { startRegistryReplica } from '../../../support/registry-replica.js';
import { RegistryRepo, registryEnv, writeBaseRegistry } from '../../../support/registry.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { ADMIN_TOKEN, node } from './support.js';

const SERVICE = 'registry-service-token-for-fleet-specs';

describe('control: peering rows carry remote_as_name from the registry replica', function () {
  this.timeout(30_000);
  let repo: RegistryRepo;
  let sys: TestSystem;
  const closers: (() => Promise<void>)[] = [];

  async function control(registryUrl: string | undefined) {
    const config = loadConfig({
      DATABASE_URL: sys.db.url,
      LOG_LEVEL: 'silent',
      ADMIN_TOKEN,
      REGISTRY_SERVICE_TOKEN: SERVICE,
      ...(registryUrl ? { REGISTRY_URL: registryUrl } : {}),
    });
    const started = await startApp(createControlApp({ ...sys.context, config }));
    closers.push(started.close);
    return api(`${started.url}/control/v1`, { token: ADMIN_TOKEN });
  }

  before(async () => {
    repo = writeBaseRegistry(new RegistryRepo());
    repo.commit('base');
    sys = await createTestSystem({ env: registryEnv(repo.dir, { REGISTRY_SERVICE_TOKEN: SERVICE, ADMIN_TOKEN }) });
    await migrate(sys.pool, [registryMigrations]);
  });
  after(async () => {
    for (const close of closers) await close();
    await sys?.close();
    repo?.destroy();
  });

  it('names known ASNs, leaves unknown ones null, and falls back to null when the replica is down', async () => {
    const replica = await startRegistryReplica(sys, repo.dir, SERVICE);
    const client = await control(replica.url);
    expect((await client.post('/ui/registry/sync')).status).to.equal(200);
    await client.post('/admin/nodes', node('fra1'));
    await client.post('/admin/nodes/fra1/peerings', { name: 'alpha', remote_asn: 4242420001 });
    await client.post('/admin/nodes/fra1/peerings', { name: 'beta', remote_asn: 4242420002 });
    await client.post('/admin/nodes/fra1/peerings', { name: 'stranger', remote_asn: 4242429999 });
    const rows = (await client.get('/admin/nodes/fra1/peerings')).body as { name: string; remote_as_name: string | null }[];
    expect(rows.map((p) => [p.name, p.remote_as_name])).to.deep.equal([
      ['alpha', 'ALPHA-AS'],
      ['beta', 'BETA-AS'],
      ['stranger', null],
    ]);

    await replica.close();
    const down = await control(replica.url);
    const fallback = await down.get('/admin/nodes/fra1/peerings');
    expect(fallback.status).to.equal(200);
    expect(fallback.body.map((p: { remote_as_name: unknown }) => p.remote_as_name)).to.deep.equal([null, null, null]);
  });
});
