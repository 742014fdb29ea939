import { expect } from 'chai';
import { createControlApp } from '../../../../http/control/app.js';
import { createRegistryApp } from '../../../../http/registry/app.js';
import { migrate } from '../../../../infra/db/migrate.js';
import { RegistryClient } from '../../../../infra/registry/client.js';
import { httpRoaSource, localRoaSource, type RoaSource } from '../../../../infra/registry/roa-source.js';
import { registryMigrations } from '../../../../infra/registry/store.js';
import { issueAgentToken } from '../../../support/agents.js';
import { api, expectResponse } from '../../../support/http.js';
import { RegistryRepo, registryEnv, rpsl, writeBaseRegistry } from '../../../support/registry.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { ADMIN_TOKEN, node } from '../fleet/support.js';

const TOKEN = 'registry-service-token-for-specs';

describe('GET /agent/roas (control server)', function () {
  this.timeout(60_000);
  let repo: RegistryRepo;
  let sys: TestSystem;
  let replica: { url: string; close(): Promise<void> };
  let agentToken: string;
  const closers: (() => Promise<void>)[] = [];

  /** A control app with `options`, and an agent client of node n1 against it. */
  async function control(options?: Parameters<typeof createControlApp>[1], context = sys.context) {
    const started = await startApp(createControlApp(context, options));
    closers.push(started.close);
    return { agent: api(`${started.url}/control/v1`, { token: agentToken }), anonymous: api(`${started.url}/control/v1`) };
  }
  const registry = api('', {});
  const replicaGet = (path: string, headers: Record<string, string> = {}) => registry.get(`${replica.url}/registry/v1${path}`, { token: TOKEN, headers });
  const sync = async () => expectResponse(await registry.post(`${replica.url}/registry/v1/sync`, undefined, { token: TOKEN })).status(200);

  before(async () => {
    repo = writeBaseRegistry(new RegistryRepo());
    repo.commit('base');
    sys = await createTestSystem({ env: registryEnv(repo.dir, { REGISTRY_SERVICE_TOKEN: TOKEN, ADMIN_TOKEN }) });
    await migrate(sys.pool, [registryMigrations]);
    replica = await startApp(createRegistryApp(sys.context));
    const first = await startApp(createControlApp(sys.context));
    closers.push(first.close);
    expectResponse(await api(`${first.url}/control/v1`, { token: ADMIN_TOKEN }).post('/admin/nodes', node('n1'))).status(201);
    agentToken = (await issueAgentToken(first.url, ADMIN_TOKEN, 'n1')).token;
  });
  after(async () => {
    for (const close of closers) await close();
    await replica?.close();
    await sys?.close();
    repo?.destroy();
  });

  it('without a replica attached: 404, never an empty set; 401 without an agent token', async () => {
    const c = await control({ roaSource: null });
    expectResponse(await c.agent.get('/agent/roas'))
      .status(404)
      .detail('no ROA set: no registry replica is attached to this control server');
    expectResponse(await c.anonymous.get('/agent/roas')).status(401);
    // The default without REGISTRY_URL is the same.
    expectResponse(await (await control()).agent.get('/agent/roas'))
      .status(404)
      .detail('no ROA set: no registry replica is attached to this control server');
  });

  it('replica in the same process: 404 before its first load, then the replica’s set and tag; If-None-Match costs a 304', async () => {
    const c = await control({ roaSource: localRoaSource(sys.pool) });
    expectResponse(await c.agent.get('/agent/roas'))
      .status(404)
      .detail('no ROA set: the registry replica has not loaded a commit with ROAs yet');
    await sync();
    const fromReplica = await replicaGet('/roas');
    const res = await c.agent.get('/agent/roas');
    expectResponse(res).status(200).header('etag', fromReplica.headers.get('etag')!);
    expect(res.body).to.deep.equal(fromReplica.body);
    expect(res.body.roas).to.deep.include({ prefix: 'fd42:1::/48', max_length: 48, asn: 4242420001 });
    const again = await c.agent.get('/agent/roas', { headers: { 'if-none-match': res.headers.get('etag')! } });
    expectResponse(again).status(304);
    expect(again.text).to.equal('');
  });

  it('a changed route object changes the set and its tag: the old tag gets the new set', async () => {
    const c = await control({ roaSource: localRoaSource(sys.pool) });
    const before = (await c.agent.get('/agent/roas')).headers.get('etag')!;
    repo.put(
      'route',
      '172.20.2.0/26',
      rpsl([
        ['route', '172.20.2.0/26'],
        ['origin', 'AS4242420001'],
        ['max-length', '28'],
        ['mnt-by', 'ALPHA-MNT'],
        ['source', 'DN42'],
      ]),
    );
    repo.commit('max-length 28');
    await sync();
    const res = await c.agent.get('/agent/roas', { headers: { 'if-none-match': before } });
    expectResponse(res).status(200);
    expect(res.headers.get('etag')).not.to.equal(before);
    expect(res.body.roas).to.deep.include({ prefix: '172.20.2.0/26', max_length: 28, asn: 4242420001 });
  });

  it('replica over HTTP (REGISTRY_URL): the same set and tag, and a 304 for it', async () => {
    const c = await control(undefined, { ...sys.context, config: { ...sys.config, registryUrl: replica.url, registryServiceToken: TOKEN } });
    const fromReplica = await replicaGet('/roas');
    const res = await c.agent.get('/agent/roas');
    expectResponse(res).status(200).header('etag', fromReplica.headers.get('etag')!);
    expect(res.body).to.deep.equal(fromReplica.body);
    expectResponse(await c.agent.get('/agent/roas', { headers: { 'if-none-match': fromReplica.headers.get('etag')! } })).status(304);
  });

  it('replica over HTTP gone: the last set read keeps being served; a replica never read answers 503', async () => {
    const other = await startApp(createRegistryApp(sys.context));
    const source: RoaSource = httpRoaSource(new RegistryClient({ baseUrl: other.url, token: TOKEN, timeoutMs: 2000 }), sys.log, { revalidateMs: 0 });
    const c = await control({ roaSource: source });
    const served = await c.agent.get('/agent/roas');
    expectResponse(served).status(200);
    await other.close();
    const stale = await c.agent.get('/agent/roas');
    expectResponse(stale).status(200).header('etag', served.headers.get('etag')!);
    expect(stale.body).to.deep.equal(served.body);

    const never = await control({ roaSource: httpRoaSource(new RegistryClient({ baseUrl: other.url, token: TOKEN, timeoutMs: 2000 }), sys.log) });
    expectResponse(await never.agent.get('/agent/roas'))
      .status(503)
      .detail('registry replica unavailable');
  });
});
