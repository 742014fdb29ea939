import { expect } from 'chai';
import { renameSync } from 'node:fs';
import { createControlApp } from '../../../http/control/app.js';
import { createRegistryApp } from '../../../http/registry/app.js';
import { loadConfig } from '../../../infra/config.js';
import { migrate } from '../../../infra/db/migrate.js';
import { asNames, RegistryClient } from '../../../infra/registry/client.js';
import { registryMigrations } from '../../../infra/registry/store.js';
import { api, expectResponse } from '../../support/http.js';
import { RegistryRepo, registryEnv, writeBaseRegistry } from '../../support/registry.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';

const ADMIN = 'admin-token-for-the-specs';
const SERVICE = 'registry-service-token-for-specs';

describe('Console registry proxy', function () {
  this.timeout(30_000);
  let repo: RegistryRepo;
  let sys: TestSystem;
  let replicaUrl: string;
  let commit: string;
  const closers: (() => Promise<void>)[] = [];

  /** A control server whose configuration points at `registryUrl` (or at no replica). */
  async function control(registryUrl?: string, token = SERVICE) {
    const config = loadConfig({
      DATABASE_URL: sys.db.url,
      LOG_LEVEL: 'silent',
      ADMIN_TOKEN: ADMIN,
      REGISTRY_SERVICE_TOKEN: token,
      ...(registryUrl ? { REGISTRY_URL: registryUrl } : {}),
    });
    const started = await startApp(createControlApp({ ...sys.context, config }));
    closers.push(started.close);
    return { client: api(started.url, { token: ADMIN }), config };
  }

  async function replica(env: Record<string, string> = {}) {
    const config = loadConfig({
      DATABASE_URL: sys.db.url,
      LOG_LEVEL: 'silent',
      REGISTRY_SERVICE_TOKEN: SERVICE,
      REGISTRY_SOURCE: repo.dir,
      DATA_DIR: sys.config.dataDir,
      ...env,
    });
    const started = await startApp(createRegistryApp({ ...sys.context, config }));
    closers.push(started.close);
    return started;
  }

  before(async () => {
    repo = writeBaseRegistry(new RegistryRepo());
    commit = repo.commit('base');
    sys = await createTestSystem({ env: registryEnv(repo.dir, { REGISTRY_SERVICE_TOKEN: SERVICE }) });
    await migrate(sys.pool, [registryMigrations]);
    replicaUrl = (await replica()).url;
  });
  after(async () => {
    for (const close of closers) await close();
    await sys?.close();
    repo?.destroy();
  });

  it('wants the admin bearer', async () => {
    const { client } = await control(replicaUrl);
    expectResponse(await client.get('/control/v1/ui/registry/status', { token: 'not-the-admin-token-at-all' })).status(401);
  });

  it('reports status and syncs through the replica', async () => {
    const { client } = await control(replicaUrl);
    expect((await client.get('/control/v1/ui/registry/status')).body).to.deep.equal({ enabled: true, commit: null, asn_count: 0, synced_at: null });
    expectResponse(await client.post('/control/v1/ui/registry/sync'))
      .status(200)
      .body({ synced: true, commit });
    expectResponse(await client.post('/control/v1/ui/registry/sync'))
      .status(200)
      .body({ synced: false, commit });
    expectResponse(await client.post('/control/v1/ui/registry/sync?force=1'))
      .status(200)
      .body({ synced: true, commit });
    const status = await client.get('/control/v1/ui/registry/status');
    expect(Object.keys(status.body).sort()).to.deep.equal(['asn_count', 'commit', 'enabled', 'synced_at']);
    expectResponse(status).body({ enabled: true, commit, asn_count: 3 });
  });

  it('passes on 409 when the upstream needs a token and 502 when the upstream fails', async () => {
    const tokenless = await replica({ REGISTRY_SOURCE: 'https://git.example.invalid/registry.git' });
    const { client: viaTokenless } = await control(tokenless.url);
    expectResponse(await viaTokenless.post('/control/v1/ui/registry/sync'))
      .status(409)
      .detail('the registry upstream needs a token: REGISTRY_UPSTREAM_TOKEN is not configured');

    const { client } = await control(replicaUrl);
    const moved = `${repo.dir}-gone`;
    renameSync(repo.dir, moved);
    try {
      expectResponse(await client.post('/control/v1/ui/registry/sync?force=1'))
        .status(502)
        .detail('registry upstream failed; the replica keeps its data');
    } finally {
      renameSync(moved, repo.dir);
    }
    expectResponse(await client.get('/control/v1/ui/registry/status'))
      .status(200)
      .body({ commit });
  });

  it('returns names deduplicated in order, the first 200 only', async () => {
    const { client } = await control(replicaUrl);
    expect((await client.get('/control/v1/ui/registry/names?asns=4242420002,AS4242420001,4242420002,64512')).body).to.deep.equal({
      names: { 4242420001: 'ALPHA-AS', 4242420002: 'BETA-AS' },
    });
    // 4242420002 repeated keeps its first place (200th); 4242420001 is the 201st distinct one.
    const filler = Array.from({ length: 199 }, (_, i) => 64512 + i);
    const list = [...filler, 4242420002, 64512, 4242420002, 4242420001].join(',');
    expect((await client.get(`/control/v1/ui/registry/names?asns=${list}`)).body).to.deep.equal({ names: { 4242420002: 'BETA-AS' } });
  });

  it('answers 422 for a missing or invalid asns parameter', async () => {
    const { client } = await control(replicaUrl);
    expectResponse(await client.get('/control/v1/ui/registry/names')).status(422);
    expectResponse(await client.get('/control/v1/ui/registry/names?asns=')).status(422);
    expectResponse(await client.get('/control/v1/ui/registry/names?asns=1,abc')).status(422);
    expectResponse(await client.get('/control/v1/ui/registry/names?asns=4294967296')).status(422);
  });

  it('returns the ASN summary, its verification options and maintainers; 404 when unknown', async () => {
    const { client } = await control(replicaUrl);
    const asn = await client.get('/control/v1/ui/registry/asn/4242420001');
    expectResponse(asn).status(200);
    expect(Object.keys(asn.body).sort()).to.deep.equal(['as_name', 'asn', 'mnt_by', 'updated_at']);
    expectResponse(asn).body({ asn: 4242420001, as_name: 'ALPHA-AS', mnt_by: ['ALPHA-MNT', 'BETA-MNT'] });
    const options = await client.get('/control/v1/ui/registry/asn/4242420001/verification-options');
    expectResponse(options)
      .status(200)
      .body({ mntners: ['ALPHA-MNT', 'BETA-MNT'] });
    expect(options.body.options.map((o: { kind: string }) => o.kind)).to.deep.equal([
      'pgp',
      'pgp',
      'ssh',
      'ssh',
      'email',
      'email',
      'email',
      'pgp',
      'ssh',
      'email',
      'email',
    ]);
    expectResponse(await client.get('/control/v1/ui/registry/mntner/alpha-mnt'))
      .status(200)
      .body({ mntner: 'ALPHA-MNT' });
    expectResponse(await client.get('/control/v1/ui/registry/asn/64512'))
      .status(404)
      .detail('AS64512 not found in the registry');
    expectResponse(await client.get('/control/v1/ui/registry/asn/64512/verification-options')).status(404);
    expectResponse(await client.get('/control/v1/ui/registry/mntner/NOPE-MNT'))
      .status(404)
      .detail('maintainer NOPE-MNT not found in the registry');
  });

  for (const [name, url] of [
    ['not configured', undefined],
    ['unreachable', 'http://127.0.0.1:1'],
  ] as const) {
    it(`replica ${name}: explicit queries 503, names fall back to AS<asn>`, async () => {
      const { client, config } = await control(url);
      expectResponse(await client.get('/control/v1/ui/registry/asn/4242420001')).status(503);
      expectResponse(await client.get('/control/v1/ui/registry/asn/4242420001/verification-options')).status(503);
      expectResponse(await client.get('/control/v1/ui/registry/mntner/ALPHA-MNT')).status(503);
      expectResponse(await client.post('/control/v1/ui/registry/sync')).status(503);
      expect((await client.get('/control/v1/ui/registry/names?asns=4242420001,64512')).body).to.deep.equal({
        names: { 4242420001: 'AS4242420001', 64512: 'AS64512' },
      });
      const status = await client.get('/control/v1/ui/registry/status');
      if (url === undefined) expect(status.body).to.deep.equal({ enabled: false, commit: null, asn_count: 0, synced_at: null });
      else expectResponse(status).status(503);
      expect(await asNames(config, [4242420001])).to.equal(null);
    });
  }

  it('treats a replica that refuses the service token as unavailable', async () => {
    const { client } = await control(replicaUrl, 'a-service-token-that-is-wrong');
    expectResponse(await client.get('/control/v1/ui/registry/asn/4242420001'))
      .status(503)
      .detail('registry replica unavailable');
  });

  it('asNames gives the known names and caches them, negative answers included', async () => {
    const { config } = await control(replicaUrl);
    const names = await asNames(config, [4242420001, 64512, 4242420002]);
    expect(names && Object.fromEntries(names)).to.deep.equal({ 4242420001: 'ALPHA-AS', 4242420002: 'BETA-AS' });

    const started = await replica();
    let clock = 0;
    const client = new RegistryClient({ baseUrl: started.url, token: SERVICE, namesTtlMs: 1000, now: () => clock });
    expect(Object.fromEntries(await client.lookupNames([4242420001, 64512]))).to.deep.equal({ 4242420001: 'ALPHA-AS' });
    await started.close();
    // Within the TTL the replica is not asked again, so its absence goes unnoticed.
    expect(Object.fromEntries(await client.lookupNames([64512, 4242420001]))).to.deep.equal({ 4242420001: 'ALPHA-AS' });
    clock = 1001;
    let failed = false;
    await client.lookupNames([4242420001]).catch(() => (failed = true));
    expect(failed).to.equal(true);
  });
});
