import { expect } from 'chai';
import { createControlApp } from '../../../../http/control/app.js';
import { loadConfig } from '../../../../infra/config.js';
import { migrate } from '../../../../infra/db/migrate.js';
import { registryMigrations } from '../../../../infra/registry/store.js';
import { issueAgentToken } from '../../../support/agents.js';
import { api, expectResponse } from '../../../support/http.js';
import { startRegistryReplica } from '../../../support/registry-replica.js';
import { RegistryRepo, registryEnv, writeBaseRegistry } from '../../../support/registry.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { ADMIN_TOKEN, node } from '../fleet/support.js';
import { postTable, route } from './support.js';

const SERVICE = 'registry-service-token-for-routing-specs';
const ALPHA = 4242420001; // ALPHA-AS
const BETA = 4242420002; // BETA-AS
const NAMELESS = 4242420003; // an aut-num without as-name
const STRANGER = 4242429999; // not in the registry

describe('control: routing views name origin ASNs from the registry replica', function () {
  this.timeout(60_000);
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
    return { url: started.url, admin: api(`${started.url}/control/v1`, { token: ADMIN_TOKEN }) };
  }

  let withReplica: Awaited<ReturnType<typeof control>>;
  let withoutReplica: Awaited<ReturnType<typeof control>>;
  let replicaUrl: string;
  let replicaClose: (() => Promise<void>) | undefined;

  before(async () => {
    repo = writeBaseRegistry(new RegistryRepo());
    repo.commit('base');
    sys = await createTestSystem({ env: registryEnv(repo.dir, { REGISTRY_SERVICE_TOKEN: SERVICE, ADMIN_TOKEN }) });
    await migrate(sys.pool, [registryMigrations]);
    const replica = await startRegistryReplica(sys, repo.dir, SERVICE);
    replicaClose = replica.close;
    replicaUrl = replica.url;
    withReplica = await control(replica.url);
    withoutReplica = await control(undefined);
    expectResponse(await withReplica.admin.post('/ui/registry/sync')).status(200);
    expectResponse(await withReplica.admin.post('/admin/nodes', node('n1'))).status(201);
    const { token } = await issueAgentToken(withReplica.url, ADMIN_TOKEN, 'n1');
    await postTable(api(`${withReplica.url}/control/v1`, { token }), 'n1', '2026-11-01T11:58:00Z', [
      route('172.20.0.0/24', ALPHA, [ALPHA]),
      route('172.20.1.0/24', BETA, [BETA]),
      route('172.20.2.0/24', NAMELESS, [BETA, NAMELESS]),
      route('172.20.3.0/24', STRANGER, [BETA, STRANGER]),
      route('fd42:1::/48', BETA, [BETA]),
    ]);
  });
  after(async () => {
    for (const close of closers) await close();
    await replicaClose?.();
    await sys?.close();
    repo?.destroy();
  });

  it('as_names names the origins of the page only, unknown ones omitted', async () => {
    const all = (await withReplica.admin.get('/admin/nodes/n1/routing/prefixes')).body;
    expect(all.as_names).to.deep.equal({ [ALPHA]: 'ALPHA-AS', [BETA]: 'BETA-AS' });
    const firstPage = (await withReplica.admin.get('/admin/nodes/n1/routing/prefixes?limit=1')).body;
    expect(firstPage.as_names).to.deep.equal({ [ALPHA]: 'ALPHA-AS' });
    const strangers = (await withReplica.admin.get(`/admin/nodes/n1/routing/prefixes?path_asn=${STRANGER}`)).body;
    expect(strangers).to.deep.include({ total: 1, as_names: {} });
  });

  it('origin rows carry the as-name, null for an AS without one; the same rows in every view', async () => {
    const expected = [
      { asn: BETA, name: 'BETA-AS', count: 2, count_v4: 1, count_v6: 1 },
      { asn: ALPHA, name: 'ALPHA-AS', count: 1, count_v4: 1, count_v6: 0 },
      { asn: NAMELESS, name: null, count: 1, count_v4: 1, count_v6: 0 },
      { asn: STRANGER, name: null, count: 1, count_v4: 1, count_v6: 0 },
    ];
    expect((await withReplica.admin.get('/admin/nodes/n1/routing/origins')).body.origins).to.deep.equal(expected);
    expect((await withReplica.admin.get('/ui/nodes/n1/routing/dashboard')).body.origins).to.deep.equal(expected);
    const fleet = (await withReplica.admin.get('/ui/routing/fleet-overview')).body.origins;
    expect(fleet).to.deep.equal(expected.map((o) => ({ ...o, nodes: 1 })));
  });

  it('without a replica names are null and as_names is empty; a replica that stops answering is the same', async () => {
    expect((await withoutReplica.admin.get('/admin/nodes/n1/routing/prefixes')).body.as_names).to.deep.equal({});
    expect((await withoutReplica.admin.get('/ui/routing/fleet-overview')).body.origins.map((o: { name: unknown }) => o.name)).to.deep.equal([
      null,
      null,
      null,
      null,
    ]);
    await replicaClose!();
    replicaClose = undefined;
    // A fresh server (a new configuration, so a registry client with nothing cached) whose replica is gone.
    const down = await control(replicaUrl);
    const res = await down.admin.get('/admin/nodes/n1/routing/prefixes');
    expectResponse(res).status(200);
    expect(res.body.as_names).to.deep.equal({});
    expect((await down.admin.get('/admin/nodes/n1/routing/origins')).body.origins.map((o: { name: unknown }) => o.name)).to.deep.equal([
      null,
      null,
      null,
      null,
    ]);
  });
});
