import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { createControlApp } from '../../../../http/control/app.js';
import { issueAgentToken } from '../../../support/agents.js';
import { api } from '../../../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../../../support/system.js';
import { node } from '../fleet/support.js';
import { snapshot } from '../agent/telemetry-support.js';

interface Line {
  level: number;
  msg: string;
  service?: string;
  req?: { id: string; method: string; url: string };
  res?: { statusCode: number };
  responseTime?: number;
}

/**
 * `/public/*` answers ahead of the common front (pino-http, body parser, the
 * other routers) with a lean access log of its own: the same request id
 * handling and the same access line, once per request.
 */
describe('control: access log of the public routes', () => {
  let sys: TestSystem;
  let app: { url: string; close(): Promise<void> };
  let lines: Line[];

  beforeEach(async () => {
    sys = await createTestSystem({ env: { ADMIN_TOKEN: 'access-log-admin-token-0123456789' } });
    lines = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const text of String(chunk).split('\n')) if (text) lines.push(JSON.parse(text));
        done();
      },
    });
    app = await startApp(createControlApp({ ...sys.context, log: pino({ level: 'debug' }, sink) }));
  });
  afterEach(async () => {
    await app.close();
    await sys.close();
  });

  const accessLines = (url: string) => lines.filter((l) => l.req?.url === url && /^request (completed|aborted)$/.test(l.msg));

  it('logs each /public GET once, at debug, with the request id it echoes', async () => {
    const res = await fetch(`${app.url}/control/v1/public/map`);
    expect(res.status).to.equal(200);
    const id = res.headers.get('x-request-id');
    expect(id).to.match(/^[0-9a-f-]{36}$/);
    await new Promise((r) => setImmediate(r));
    const [line, ...more] = accessLines('/control/v1/public/map');
    expect(more).to.deep.equal([]);
    expect(line).to.deep.include({
      level: 20,
      msg: 'request completed',
      service: 'control',
      req: { id, method: 'GET', url: '/control/v1/public/map' },
      res: { statusCode: 200 },
    });
    expect(line.responseTime).to.be.a('number');

    const given = await fetch(`${app.url}/control/v1/public/fleet`, { headers: { 'x-request-id': 'edge-42' } });
    expect(given.headers.get('x-request-id')).to.equal('edge-42');
    await new Promise((r) => setImmediate(r));
    expect(accessLines('/control/v1/public/fleet').map((l) => l.req?.id)).to.deep.equal(['edge-42']);
  });

  it('logs an unknown /public path once (info, 404), and other routes still through pino-http', async () => {
    expect((await fetch(`${app.url}/control/v1/public/nothing`)).status).to.equal(404);
    const health = await fetch(`${app.url}/control/v1/healthz`);
    expect(health.status).to.equal(200);
    await new Promise((r) => setImmediate(r));
    expect(accessLines('/control/v1/public/nothing').map((l) => [l.level, l.res?.statusCode])).to.deep.equal([[30, 404]]);
    const [healthLine, ...more] = accessLines('/control/v1/healthz');
    expect(more).to.deep.equal([]);
    expect(healthLine).to.deep.include({
      level: 20,
      service: 'control',
      req: { id: health.headers.get('x-request-id'), method: 'GET', url: '/control/v1/healthz' },
      res: { statusCode: 200 },
    });
  });

  it('logs each agent desired-state pull once (it is answered in front, like /public), with the request id it echoes', async () => {
    const admin = api(`${app.url}/control/v1`, { token: 'access-log-admin-token-0123456789' });
    expect((await admin.post('/admin/nodes', node('n1'))).status).to.equal(201);
    const { token } = await issueAgentToken(app.url, 'access-log-admin-token-0123456789', 'n1');
    const refused = await fetch(`${app.url}/control/v1/agent/desired-state`, { headers: { 'x-request-id': 'edge-7' } });
    const none = await fetch(`${app.url}/control/v1/agent/desired-state`, { headers: { authorization: `Bearer ${token}` } });
    expect([refused.status, none.status]).to.deep.equal([401, 404]);
    expect(refused.headers.get('x-request-id')).to.equal('edge-7');
    await new Promise((r) => setImmediate(r));
    expect(accessLines('/control/v1/agent/desired-state').map((l) => [l.req?.id, l.res?.statusCode])).to.deep.equal([
      ['edge-7', 401],
      [none.headers.get('x-request-id'), 404],
    ]);
  });

  it('logs each agent report once (answered in front, like the pull), at its level, with the request id it echoes', async () => {
    const admin = api(`${app.url}/control/v1`, { token: 'access-log-admin-token-0123456789' });
    expect((await admin.post('/admin/nodes', node('n1'))).status).to.equal(201);
    const { token } = await issueAgentToken(app.url, 'access-log-admin-token-0123456789', 'n1');
    const post = (body: unknown, headers: Record<string, string>) =>
      fetch(`${app.url}/control/v1/agent/runtime-snapshot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const agent = { authorization: `Bearer ${token}` };
    const refused = await post(snapshot('n1'), { 'x-request-id': 'edge-8' });
    const other = await post(snapshot('n2'), agent);
    const invalid = await post({ ...snapshot('n1'), containers: 'none' }, agent);
    const taken = await post(snapshot('n1'), { ...agent, 'x-request-id': 'edge-9' });
    expect([refused.status, other.status, invalid.status, taken.status]).to.deep.equal([401, 403, 422, 200]);
    expect(await refused.json()).to.deep.equal({ detail: 'missing bearer token' });
    expect([refused, taken].map((r) => r.headers.get('x-request-id'))).to.deep.equal(['edge-8', 'edge-9']);
    await new Promise((r) => setImmediate(r));
    expect(accessLines('/control/v1/agent/runtime-snapshot').map((l) => [l.req?.id, l.level, l.res?.statusCode])).to.deep.equal([
      ['edge-8', 30, 401],
      [other.headers.get('x-request-id'), 30, 403],
      [invalid.headers.get('x-request-id'), 30, 422],
      ['edge-9', 20, 200],
    ]);
  });
});
