import { expect } from 'chai';
import { createControlApp } from '../../../http/control/app.js';
import { createIdentityApp } from '../../../http/identity/app.js';
import { createRegistryApp } from '../../../http/registry/app.js';
import { serviceMetrics } from '../../../http/shared/metrics.js';
import { startSite } from '../../../http/site/app.js';
import { loadConfig } from '../../../infra/config.js';
import { migrate } from '../../../infra/db/migrate.js';
import { registryMigrations } from '../../../infra/registry/store.js';
import { allProjections } from '../../../projections/index.js';
import { agentSocket } from '../../support/agent-socket.js';
import { issueAgentToken } from '../../support/agents.js';
import { api, expectResponse } from '../../support/http.js';
import { parsePrometheus, samplesOf, type PromFamily } from '../../support/prometheus.js';
import { RegistryRepo, registryEnv, writeBaseRegistry } from '../../support/registry.js';
import { startApp } from '../../support/system.js';
import { eventually } from '../../support/wait.js';
import { ADMIN_TOKEN } from '../control/fleet/support.js';
import { snapshot, startAgents, type AgentHarness } from '../control/agent/telemetry-support.js';

const SERVICE_TOKEN = 'metrics-spec-registry-service-token';
const METRICS_TOKEN = 'metrics-spec-metrics-token-0123456789';

/** `GET <base>/metrics` as Prometheus scrapes it, parsed by an independent parser. */
async function scrape(base: string, headers: Record<string, string> = {}): Promise<Map<string, PromFamily>> {
  const res = await fetch(`${base}/metrics`, { headers });
  const text = await res.text();
  expect(res.status, text.slice(0, 300)).to.equal(200);
  expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
  expect(res.headers.get('cache-control')).to.equal('no-store');
  return parsePrometheus(text);
}

const value = (families: Map<string, PromFamily>, name: string, labels: Record<string, string> = {}): number => {
  const samples = samplesOf(families, name, labels);
  expect(samples, `${name} ${JSON.stringify(labels)}`).to.have.length(1);
  return Number(samples[0].value);
};

describe('GET /metrics (Prometheus text format, one registry per service instance)', function () {
  this.timeout(60_000);
  let h: AgentHarness;
  let repo: RegistryRepo;
  const closers: (() => Promise<void>)[] = [];
  const start = async (app: Parameters<typeof startApp>[0]) => {
    const started = await startApp(app);
    closers.push(started.close);
    return started.url;
  };

  before(async () => {
    repo = writeBaseRegistry(new RegistryRepo());
    repo.commit('base');
    h = await startAgents(['n1', 'n2'], registryEnv(repo.dir, { REGISTRY_SERVICE_TOKEN: SERVICE_TOKEN }));
    await migrate(h.sys.pool, [registryMigrations]);
  });
  after(async () => {
    for (const close of closers.reverse()) await close();
    await h?.close();
    repo?.destroy();
  });

  it('control: requests by route template and status, append latency, projection lag, agents, doorbells and node health', async () => {
    expectResponse(await h.admin.get('/admin/nodes/n1')).status(200);
    expectResponse(await h.admin.get('/admin/nodes/n2')).status(200);
    expectResponse(await h.admin.get('/admin/nodes/ghost')).status(404);
    expectResponse(await api(`${h.url}/control/v1`).get('/admin/nodes')).status(401);
    expectResponse(await api(h.url).get('/no/such/path/4242')).status(404);
    expectResponse(await h.agent.n1.post('/agent/runtime-snapshot', snapshot('n1'))).status(200);
    await h.sys.context.background.drain();

    const { token } = await issueAgentToken(h.url, ADMIN_TOKEN, 'n2');
    const agent = agentSocket(h.url, 'ws/n2', token);
    await agent.next('hello');
    expectResponse(await h.admin.post('/admin/nodes/n2/notify', { event: 'snapshot_request', reason: 'metrics spec' })).status(200);
    await agent.next('snapshot_request');

    const m = await scrape(h.url);
    const route = (r: string, status: string, method = 'GET') => ({ method, route: r, status });
    expect(value(m, 'dn42_http_requests_total', route('/control/v1/admin/nodes/{node_id}', '200'))).to.equal(2);
    expect(value(m, 'dn42_http_requests_total', route('/control/v1/admin/nodes/{node_id}', '404'))).to.equal(1);
    expect(value(m, 'dn42_http_requests_total', route('/control/v1/admin/nodes', '201', 'POST'))).to.equal(2);
    // A path nothing serves and a refusal ahead of the routes: one bounded label, never the path.
    expect(value(m, 'dn42_http_requests_total', route('(no route)', '404'))).to.equal(1);
    expect(value(m, 'dn42_http_requests_total', route('(no route)', '401'))).to.equal(1);
    const routes = samplesOf(m, 'dn42_http_requests_total').map((s) => s.labels!.route);
    expect(
      routes.filter((r) => /ghost|4242|\/n1|\/n2/.test(r)),
      'raw path segments in route labels',
    ).to.deep.equal([]);

    const [latency] = samplesOf(m, 'dn42_http_request_duration_seconds', route('/control/v1/admin/nodes/{node_id}', '200'));
    expect(m.get('dn42_http_request_duration_seconds')!.type).to.equal('HISTOGRAM');
    expect(Number(latency.count)).to.equal(2);
    expect(Number(latency.sum)).to.be.greaterThan(0).and.lessThan(60);
    expect(Number(latency.buckets!['+Inf'])).to.equal(2);

    const [appends] = samplesOf(m, 'dn42_eventstore_append_duration_seconds', { outcome: 'ok' });
    expect(Number(appends.count), 'appends (two nodes, tokens, a snapshot)').to.be.at.least(3);
    expect(Number(appends.sum)).to.be.greaterThan(0);

    const lag = samplesOf(m, 'dn42_projection_lag_events');
    expect(lag.map((s) => s.labels!.projection).sort()).to.deep.equal(allProjections.map((p) => p.name).sort());
    for (const s of lag) expect(Number(s.value), s.labels!.projection).to.be.at.least(0).and.satisfy(Number.isInteger);

    expect(value(m, 'dn42_agents_connected')).to.equal(1);
    expect(value(m, 'dn42_agent_doorbells_sent_total', { type: 'snapshot_request' })).to.equal(1);
    expect(value(m, 'dn42_agent_doorbells_dropped_total')).to.equal(0);

    const health = Object.fromEntries(samplesOf(m, 'dn42_nodes').map((s) => [s.labels!.health, Number(s.value)]));
    expect(health).to.deep.equal({ ok: 1, degraded: 0, stale: 0, down: 0, unknown: 1 });

    // The node's health follows the service clock: 301 s after its snapshot n1 is stale.
    h.sys.clock.advance(301_000);
    expect(value(await scrape(h.url), 'dn42_nodes', { health: 'stale' })).to.equal(1);

    await agent.close();
    await eventually(async () => value(await scrape(h.url), 'dn42_agents_connected') === 0, { what: 'the agent gauge back at 0', timeoutMs: 20_000 });
  });

  it('registry: the sync age is +Inf before the first sync, then counts from the last round on the service clock', async () => {
    const url = await start(createRegistryApp(h.sys.context));
    expect(samplesOf(await scrape(url), 'dn42_registry_sync_age_seconds')[0].value).to.equal('+Inf');
    expectResponse(await api(url, { token: SERVICE_TOKEN }).post('/registry/v1/sync'))
      .status(200)
      .body({ synced: true });
    expect(value(await scrape(url), 'dn42_registry_sync_age_seconds')).to.equal(0);
    h.sys.clock.advance(90_000);
    const m = await scrape(url);
    expect(value(m, 'dn42_registry_sync_age_seconds')).to.equal(90);
    expect(value(m, 'dn42_http_requests_total', { method: 'POST', route: '/registry/v1/sync', status: '200' })).to.equal(1);
    // Only the registry service reads the replica's age; the agent channel is the control server's.
    expect(m.has('dn42_agents_connected')).to.equal(false);
  });

  it('identity: its own requests and the shared event store and projection series', async () => {
    const url = await start(createIdentityApp(h.sys.context));
    expect((await fetch(`${url}/.well-known/openid-configuration`)).status).to.equal(200);
    const m = await scrape(url);
    expect(value(m, 'dn42_http_requests_total', { method: 'GET', route: '/.well-known/openid-configuration', status: '200' })).to.equal(1);
    expect(m.has('dn42_eventstore_append_duration_seconds')).to.equal(true);
    expect(m.has('dn42_projection_lag_events')).to.equal(true);
    expect(m.has('dn42_registry_sync_age_seconds')).to.equal(false);
  });

  it('site: its own paths by name; to anyone not allowed /metrics is any other path (302 to /)', async () => {
    const site = await startSite(h.sys.config, h.sys.log, { bakeEveryMs: 0, mapFrom: h.url, metrics: serviceMetrics(h.sys.context, 'site') });
    const url = await start(site.app);
    for (const path of ['/', '/', '/robots.txt', '/nodes/n1', '/elsewhere']) await fetch(`${url}${path}`, { redirect: 'manual' });
    const proxied = await fetch(`${url}/metrics`, { redirect: 'manual', headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect(proxied.status).to.equal(302);
    expect(proxied.headers.get('location')).to.equal('/');
    const m = await scrape(url);
    expect(value(m, 'dn42_http_requests_total', { method: 'GET', route: '/', status: '200' })).to.equal(2);
    expect(value(m, 'dn42_http_requests_total', { method: 'GET', route: '/robots.txt', status: '200' })).to.equal(1);
    expect(value(m, 'dn42_http_requests_total', { method: 'GET', route: '/nodes/*', status: '302' })).to.equal(1);
    expect(value(m, 'dn42_http_requests_total', { method: 'GET', route: '(no route)', status: '302' })).to.equal(1);
    // The refused scrape: the /metrics route matched, then let the request through to the redirect.
    expect(value(m, 'dn42_http_requests_total', { method: 'GET', route: '/metrics', status: '302' })).to.equal(1);

    const config = loadConfig({ DATABASE_URL: h.sys.db.url, LOG_LEVEL: 'silent', METRICS_TOKEN });
    const guarded = await startSite(config, h.sys.log, { bakeEveryMs: 0, mapFrom: h.url, metrics: serviceMetrics({ ...h.sys.context, config }, 'site') });
    const guardedUrl = await start(guarded.app);
    const refused = await fetch(`${guardedUrl}/metrics`, { redirect: 'manual', headers: { authorization: 'Bearer wrong-token-0123456789abcdef' } });
    expect(refused.status).to.equal(302);
    expect((await scrape(guardedUrl, { authorization: `Bearer ${METRICS_TOKEN}` })).has('dn42_http_requests_total')).to.equal(true);
  });

  it('is not served through a reverse proxy (a forwarding header) without METRICS_TOKEN: the service 404 answers', async () => {
    for (const header of ['x-forwarded-for', 'forwarded', 'cf-connecting-ip', 'x-real-ip']) {
      const res = await api(h.url).get('/metrics', { headers: { [header]: '203.0.113.7' } });
      expectResponse(res).status(404);
      expect(res.text).to.not.include('dn42_');
    }
  });

  it('with METRICS_TOKEN: answers only that bearer token (401 otherwise), from anywhere', async () => {
    const config = loadConfig({ DATABASE_URL: h.sys.db.url, LOG_LEVEL: 'silent', METRICS_TOKEN });
    const url = await start(createControlApp({ ...h.sys.context, config }));
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong-token-0123456789abcdef' }, { authorization: METRICS_TOKEN }]) {
      const res = await fetch(`${url}/metrics`, { headers });
      expect(res.status).to.equal(401);
      expect(res.headers.get('www-authenticate')).to.equal('Bearer');
    }
    const m = await scrape(url, { authorization: `Bearer ${METRICS_TOKEN}`, 'x-forwarded-for': '203.0.113.7' });
    expect(m.has('dn42_http_requests_total')).to.equal(true);
  });
});
