import { expect } from 'chai';
import { createRegistryApp } from '../../../http/registry/app.js';
import { migrate } from '../../../infra/db/migrate.js';
import { registryMigrations } from '../../../infra/registry/store.js';
import { api, expectResponse } from '../../support/http.js';
import { RegistryRepo, registryEnv, rpsl, writeBaseRegistry } from '../../support/registry.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';

const TOKEN = 'registry-service-token-for-specs';
const NO_SET = 'no ROA set: the registry replica has not loaded a commit with ROAs yet';

const route = (type: 'route' | 'route6', prefix: string, origins: string[], maxLength?: string) =>
  rpsl([
    [type, prefix],
    ...origins.map((o) => ['origin', o] as const),
    ...(maxLength === undefined ? [] : [['max-length', maxLength] as const]),
    ['mnt-by', 'ALPHA-MNT'],
    ['source', 'DN42'],
  ]);

/** The base registry's routes plus route objects with max-length, and ones that cannot make a ROA. */
function writeRoutes(repo: RegistryRepo): RegistryRepo {
  return writeBaseRegistry(repo)
    .put('route', '172.20.16.0/22', route('route', '172.20.16.0/22', ['AS4242420003'], '24'))
    .put('route6', 'fd42:4242:2601::/48', route('route6', 'fd42:4242:2601::/48', ['AS4242420003'], '64'))
    .put('route', '172.20.32.0/24', route('route', '172.20.32.0/24', ['AS4242420003'], '23'))
    .put('route', '172.20.33.0/24', route('route', '172.20.33.0/24', ['AS4242420003'], '33'))
    .put('route6', 'fd42:4242:2602::/48', route('route6', 'fd42:4242:2602::/48', ['AS4242420003'], 'sixty-four'))
    .put('route', '172.20.34.1/24', route('route', '172.20.34.1/24', ['AS4242420003']));
}

describe('Registry replica: ROAs', function () {
  this.timeout(30_000);
  let repo: RegistryRepo;
  let sys: TestSystem;
  let client: ReturnType<typeof api>;
  let close: () => Promise<void>;

  before(async () => {
    repo = writeRoutes(new RegistryRepo());
    repo.commit('base');
    sys = await createTestSystem({ env: registryEnv(repo.dir, { REGISTRY_SERVICE_TOKEN: TOKEN }) });
    await migrate(sys.pool, [registryMigrations]);
    const started = await startApp(createRegistryApp(sys.context));
    close = started.close;
    client = api(started.url, { token: TOKEN });
  });
  after(async () => {
    await close?.();
    await sys?.close();
    repo?.destroy();
  });

  it('has no set before the first load (404, never an empty set), and wants the service token', async () => {
    expectResponse(await client.get('/registry/v1/roas'))
      .status(404)
      .detail(NO_SET);
    expectResponse(await client.get('/registry/v1/roas', { token: 'wrong-token-of-some-length' })).status(401);
  });

  it('serves one ROA per origin of every route and route6 object: max-length as written or the prefix length; objects that cannot make a correct ROA skipped', async () => {
    const synced = await client.post('/registry/v1/sync');
    const res = await client.get('/registry/v1/roas');
    expectResponse(res).status(200).body({ commit: synced.body.commit });
    expect(res.body.synced_at).to.equal((await client.get('/registry/v1/status')).body.synced_at);
    expect(res.body.roas).to.deep.equal([
      { prefix: '172.20.1.0/24', max_length: 24, asn: 4242420001 },
      { prefix: '172.20.1.0/24', max_length: 24, asn: 4242420002 },
      { prefix: '172.20.2.0/26', max_length: 26, asn: 4242420001 },
      { prefix: '172.20.16.0/22', max_length: 24, asn: 4242420003 },
      { prefix: 'fd42:1::/48', max_length: 48, asn: 4242420001 },
      { prefix: 'fd42:4242:2601::/48', max_length: 64, asn: 4242420003 },
    ]);
    expect(res.headers.get('etag')).to.match(/^"roas-[0-9a-f]{32}"$/);
  });

  it('answers 304 without a body for a matching If-None-Match (weak or in a list), 200 for another tag', async () => {
    const etag = (await client.get('/registry/v1/roas')).headers.get('etag')!;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await client.get('/registry/v1/roas', { headers: { 'if-none-match': header } });
      expectResponse(res).status(304).header('etag', etag);
      expect(res.text).to.equal('');
    }
    expectResponse(await client.get('/registry/v1/roas', { headers: { 'if-none-match': '"roas-0"' } })).status(200);
  });

  it('keeps the tag over a commit that changes no route object, and changes it when one does', async () => {
    const before = (await client.get('/registry/v1/roas')).headers.get('etag')!;
    repo.put(
      'mntner',
      'GAMMA-MNT',
      rpsl([
        ['mntner', 'GAMMA-MNT'],
        ['mnt-by', 'GAMMA-MNT'],
        ['source', 'DN42'],
      ]),
    );
    const quiet = repo.commit('a maintainer');
    expectResponse(await client.post('/registry/v1/sync'))
      .status(200)
      .body({ synced: true, commit: quiet });
    const same = await client.get('/registry/v1/roas', { headers: { 'if-none-match': before } });
    expectResponse(same).status(304);
    repo.put('route', '172.20.16.0/22', route('route', '172.20.16.0/22', ['AS4242420003'], '21'));
    const moved = repo.commit('max-length 21 (below the prefix length: no ROA any more)');
    expectResponse(await client.post('/registry/v1/sync'))
      .status(200)
      .body({ synced: true, commit: moved });
    const res = await client.get('/registry/v1/roas', { headers: { 'if-none-match': before } });
    expectResponse(res).status(200).body({ commit: moved });
    expect(res.headers.get('etag')).not.to.equal(before);
    expect(res.body.roas.map((r: { prefix: string }) => r.prefix)).not.to.include('172.20.16.0/22');
  });

  it('loads the same commit again when the tables were written by a version without ROAs', async () => {
    const { commit } = (await client.get('/registry/v1/status')).body;
    await sys.pool.query('UPDATE registry_state SET load_format = 1, roas_etag = NULL');
    await sys.pool.query('DELETE FROM registry_roas');
    expectResponse(await client.get('/registry/v1/roas'))
      .status(404)
      .detail(NO_SET);
    expectResponse(await client.post('/registry/v1/sync'))
      .status(200)
      .body({ synced: true, commit, previous_commit: commit });
    expectResponse(await client.get('/registry/v1/roas'))
      .status(200)
      .body({ commit });
    expectResponse(await client.post('/registry/v1/sync'))
      .status(200)
      .body({ synced: false, commit });
  });
});
