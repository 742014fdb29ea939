import { expect } from 'chai';
import { createControlApp } from '../../../http/control/app.js';
import { createIdentityApp } from '../../../http/identity/app.js';
import { createRegistryApp } from '../../../http/registry/app.js';
import { DATABASE_RETRY_AFTER_SECONDS, DATABASE_UNAVAILABLE, isDatabaseUnavailable, OutageLog } from '../../../http/shared/errors.js';
import { migrate } from '../../../infra/db/migrate.js';
import { registryMigrations } from '../../../infra/registry/store.js';
import { api, type ApiResponse } from '../../support/http.js';
import { createTestDatabase, type TestDatabase } from '../../support/database.js';
import { TcpRelay } from '../../support/tcp-relay.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';
import { node } from '../control/fleet/support.js';
import { ADMIN_TOKEN } from '../control/support.js';

const SERVICE_TOKEN = 'outage-spec-registry-token-0123456789';

describe('every service answers 503 with Retry-After while its database is unreachable', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let sys: TestSystem;
  let relay: TcpRelay;
  let servers: { url: string; close(): Promise<void> }[] = [];

  before(async () => {
    db = await createTestDatabase();
    const target = new URL(db.url);
    relay = new TcpRelay(target);
    await relay.open();
    const relayed = new URL(db.url);
    relayed.host = `127.0.0.1:${relay.port}`;
    sys = await createTestSystem({ database: { ...db, url: relayed.toString() }, env: { ADMIN_TOKEN, REGISTRY_SERVICE_TOKEN: SERVICE_TOKEN } });
    await migrate(sys.pool, [registryMigrations]);
    servers = await Promise.all([createControlApp(sys.context), createIdentityApp(sys.context), createRegistryApp(sys.context)].map((app) => startApp(app)));
  });

  after(async () => {
    for (const s of servers) await s.close();
    await sys?.close().catch(() => {});
    await db?.drop();
  });

  const requests = () => {
    const [control, identity, registry] = servers.map((s) => api(s.url));
    return [
      { name: 'control admin read', style: 'control', send: () => control.get('/control/v1/admin/nodes', { token: ADMIN_TOKEN }) },
      { name: 'control admin write', style: 'control', send: () => control.post('/control/v1/admin/nodes', node('fra1'), { token: ADMIN_TOKEN }) },
      { name: 'control agent', style: 'control', send: () => control.get('/control/v1/agent/desired-state', { token: 'agt_abc.def' }) },
      { name: 'identity jwks', style: 'identity', send: () => identity.get('/.well-known/jwks.json') },
      { name: 'identity discovery (oidc-provider)', style: 'oauth', send: () => identity.get('/.well-known/openid-configuration') },
      { name: 'registry', style: 'control', send: () => registry.get('/registry/v1/asns/4242420000', { token: SERVICE_TOKEN }) },
    ] as const;
  };

  it('answers every request that needs the database 503 with Retry-After, then recovers without a restart', async () => {
    const healthy = await Promise.all(requests().map((r) => r.send()));
    for (const [i, res] of healthy.entries()) expect(res.status, `${requests()[i].name}: ${res.text}`).to.be.below(500);

    await relay.cut();
    for (const r of requests()) {
      for (let attempt = 0; attempt < 2; attempt++) {
        const res: ApiResponse = await r.send();
        expect([r.name, res.status]).to.deep.equal([r.name, 503]);
        expect(res.headers.get('retry-after'), r.name).to.equal(String(DATABASE_RETRY_AFTER_SECONDS));
        if (r.style === 'control') expect(res.body, r.name).to.deep.equal({ detail: DATABASE_UNAVAILABLE });
        else if (r.style === 'identity')
          expect(res.body, r.name).to.deep.equal({ detail: DATABASE_UNAVAILABLE, error: 'temporarily_unavailable', fatal: false });
        else expect(res.body.error, r.name).to.equal('temporarily_unavailable');
      }
    }

    await relay.open();
    const back = await Promise.all(requests().map((r) => r.send()));
    for (const [i, res] of back.entries()) expect([requests()[i].name, res.status < 500]).to.deep.equal([requests()[i].name, true]);
  });

  it('recognises the connection failures of node-postgres and PostgreSQL, and nothing a statement did wrong', () => {
    const coded = (code: string) => Object.assign(new Error('x'), { code });
    for (const err of [
      coded('ECONNREFUSED'),
      coded('57P01'),
      coded('57P03'),
      coded('08006'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error('wrapped', { cause: coded('ECONNRESET') }),
    ]) {
      expect(isDatabaseUnavailable(err), String((err as { code?: string }).code ?? err.message)).to.equal(true);
    }
    for (const err of [coded('23505'), coded('22P05'), coded('40001'), new Error('boom'), null, 'text']) expect(isDatabaseUnavailable(err)).to.equal(false);
  });

  it('logs an outage once: later failures within the quiet time are counted, a failure after it starts a new outage', () => {
    const log = new OutageLog(30_000);
    expect(log.note(1_000)).to.deep.equal({ first: true, previous: 0 });
    for (let t = 2_000; t < 50_000; t += 10_000) expect(log.note(t).first).to.equal(false);
    expect(log.note(200_000)).to.deep.equal({ first: true, previous: 6 });
  });
});
