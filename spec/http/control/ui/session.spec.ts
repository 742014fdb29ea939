import { expect } from 'chai';
import { setTarget, uploadRelease } from '../../../../commands/releases.js';
import { FEATURES } from '../../../../http/control/ui/features.js';
import { projectVersion } from '../../../../infra/version.js';
import { api, expectResponse } from '../../../support/http.js';
import { startAgents, type AgentHarness } from '../agent/telemetry-support.js';
import { addAccount, CAPTCHA_SECRET, loginAs } from '../support.js';
import { postSnapshot } from './support.js';

const LOGIN_ENV = { CONTROL_LOGIN_CAPTCHA: 'pow', CAPTCHA_SECRET };

/** Sends every request a listed feature names (`{node_id}`: a node that has reported) and answers those that got 404 or 405. */
async function unserved(h: AgentHarness, features: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const feature of FEATURES.filter((f) => features.includes(f.name))) {
    for (const endpoint of feature.endpoints) {
      const [method, path] = endpoint.split(' ');
      const res = await h.admin.send(method, path.replace('{node_id}', 'n1'), method === 'GET' ? {} : { body: {} });
      if (res.status === 404 || res.status === 405) missing.push(`${feature.name}: ${endpoint} → ${res.status} ${res.text.slice(0, 120)}`);
    }
  }
  return missing;
}

/** A routing table through the agent endpoint, so that routing views have a report to show. */
async function postRoutingTable(h: AgentHarness, nodeId: string): Promise<void> {
  const routes = [{ prefix: '172.20.0.0/27', protocol: 'static1', origin_asn: 4242420001, as_path: [], rpki: null, local: true }];
  expectResponse(
    await h.agent[nodeId].post('/agent/routing-table', { node_id: nodeId, captured_at: h.sys.clock.now().toISOString(), rpki_observed: false, routes }),
  ).status(200);
}

describe('Console session (/ui/session)', function () {
  this.timeout(60_000);
  let h: AgentHarness;
  let replica: AgentHarness;

  before(async () => {
    h = await startAgents(['n1'], LOGIN_ENV);
    // A replica address nobody answers on: the session only reads the configuration.
    replica = await startAgents(['n1'], { REGISTRY_URL: 'http://127.0.0.1:9', REGISTRY_SERVICE_TOKEN: 'session-spec-service-token-0123456789' });
    for (const sys of [h, replica]) {
      await postSnapshot(sys, 'n1');
      await postRoutingTable(sys, 'n1');
    }
    await addAccount(h.sys, 'alice', 'correct horse');
  });
  after(async () => {
    await h?.close();
    await replica?.close();
  });

  it('answers the static token as admin with versions, heartbeat interval, liveness thresholds and features', async () => {
    const res = await h.admin.get('/ui/session');
    expectResponse(res).status(200);
    expect(res.body).to.deep.equal({
      authenticated: true,
      scope: 'admin',
      server_version: projectVersion(),
      agent_target_version: null,
      heartbeat_interval_seconds: 30,
      liveness_thresholds: { online_seconds: 75, stale_seconds: 300 },
      features: [
        'account-login',
        'audit-cursor',
        'ui-nodes-rich',
        'bgp-flaps',
        'flap-mitigations',
        'trend-range',
        'trend-compare',
        'ui-nodes-metrics',
        'as-traffic',
        'prefix-flaps',
        'flap-peers',
        'flap-alerts',
        'flap-stats',
        'flap-localize',
      ],
      identity: { username: 'admin', kind: 'static-token' },
    });
  });

  it('names the account of a session token as a user', async () => {
    const client = api(h.url);
    const login = await loginAs(client, 'alice', 'correct horse');
    expectResponse(login).status(200);
    const res = await client.get('/control/v1/ui/session', { token: login.body.token });
    expectResponse(res).status(200);
    expect(res.body.identity).to.deep.equal({ username: 'alice', kind: 'user' });
    expect(res.body.authenticated).to.equal(true);
  });

  it('lists the features that need a registry replica (origins-name) only while one is attached', async () => {
    expect(FEATURES.filter((f) => f.needsRegistry).map((f) => f.name)).to.deep.equal(['origins-name']);
    const plain = (await h.admin.get('/ui/session')).body.features;
    expect(plain).to.not.include('origins-name');
    expect((await replica.admin.get('/ui/session')).body.features).to.deep.equal(FEATURES.map((f) => f.name));
    expect(plain).to.deep.equal(FEATURES.filter((f) => !f.needsRegistry).map((f) => f.name));
  });

  it('serves every endpoint of every listed feature (no 404)', async () => {
    expect(await unserved(h, (await h.admin.get('/ui/session')).body.features)).to.deep.equal([]);
    expect(await unserved(replica, (await replica.admin.get('/ui/session')).body.features)).to.deep.equal([]);
  });

  it('answers without a database lookup', async () => {
    await h.sys.context.background.drain(); // the target copy has been read at start
    let acquired = 0;
    const count = () => acquired++;
    h.sys.pool.on('acquire', count);
    try {
      expectResponse(await h.admin.get('/ui/session')).status(200);
    } finally {
      h.sys.pool.off('acquire', count);
    }
    expect(acquired).to.equal(0);
  });

  it('shows the agent target version once it is set through the release commands', async () => {
    const deps = { pool: h.sys.pool, doorbell: h.sys.doorbell, now: h.sys.clock.now };
    await uploadRelease(deps, '1.0.300', [{ filename: 'dn42-agent-1.0.300.tgz', content: Buffer.from('agent 1.0.300') }]);
    await setTarget(deps, '1.0.300');
    expect((await h.admin.get('/ui/session')).body.agent_target_version).to.equal('1.0.300');
  });

  it('answers 401 without a token or with a wrong one', async () => {
    expectResponse(await api(`${h.url}/control/v1`).get('/ui/session')).status(401);
    expectResponse(await api(`${h.url}/control/v1`, { token: 'wrong' }).get('/ui/session')).status(401);
  });
});
