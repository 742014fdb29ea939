import { expect } from 'chai';
import { createControlApp } from '../../../http/control/app.js';
import { recordAudit } from '../../../commands/audit.js';
import { api, expectResponse } from '../../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';
import { addAccount, ADMIN_TOKEN, auditEntries, loginAs, POW_ENV } from './support.js';

const AUDIT = '/control/v1/admin/audit-log';

describe('control audit log', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  let client: ReturnType<typeof api>;
  let close: () => Promise<void>;

  before(async () => {
    sys = await createTestSystem({ env: POW_ENV });
    ({ close } = await startApp(createControlApp(sys.context)).then((s) => ((client = api(s.url)), s)));
  });

  after(async () => {
    await close?.();
    await sys?.close();
  });

  /** Sends a request and waits for its audit write. */
  async function step<T>(request: Promise<T>): Promise<T> {
    const res = await request;
    await sys.context.background.drain();
    return res;
  }

  describe('recording', () => {
    it('records every POST, PUT, PATCH and DELETE under /admin with its final status, refused ones included', async () => {
      const before = (await auditEntries(sys)).length;
      const peer = { 'x-forwarded-for': '192.0.2.44' };
      await step(client.post('/control/v1/admin/nodes', { node_id: 'x' }, { headers: peer }));
      await step(client.put('/control/v1/admin/nodes/x', {}, { token: 'wrong', headers: peer }));
      await step(client.patch('/control/v1/admin/no-such-thing', {}, { token: ADMIN_TOKEN }));
      await step(client.delete('/control/v1/admin/no-such-thing?force=1', { token: ADMIN_TOKEN }));
      await step(client.get(AUDIT, { token: ADMIN_TOKEN }));
      const rows = (await auditEntries(sys)).slice(0, (await auditEntries(sys)).length - before).reverse();
      expect(rows.map((e) => [e.actor, e.method, e.path, e.status_code, e.detail])).to.deep.equal([
        ['anonymous@192.0.2.44', 'POST', '/control/v1/admin/nodes', 401, 'missing bearer token'],
        ['anonymous@192.0.2.44', 'PUT', '/control/v1/admin/nodes/x', 401, 'invalid or expired token'],
        ['admin', 'PATCH', '/control/v1/admin/no-such-thing', 404, null],
        ['admin', 'DELETE', '/control/v1/admin/no-such-thing', 404, null],
      ]);
    });

    it('names the account as the actor of a write made with its session token', async () => {
      await addAccount(sys, 'ivy', 'ivy password');
      const token = (await step(loginAs(client, 'ivy', 'ivy password'))).body.token;
      await step(client.post('/control/v1/admin/no-such-thing', {}, { token }));
      const [newest] = await auditEntries(sys, 1);
      expect([newest.actor, newest.path, newest.status_code]).to.deep.equal(['ivy', '/control/v1/admin/no-such-thing', 404]);
    });

    it('records refused writes while the admin surface is locked', async () => {
      const locked = await createTestSystem();
      const server = await startApp(createControlApp(locked.context));
      try {
        await api(server.url).delete('/control/v1/admin/nodes/a', { headers: { 'cf-connecting-ip': '2001:db8::1' } });
        const [entry] = await auditEntries(locked);
        expect([entry.actor, entry.method, entry.status_code, entry.detail]).to.deep.equal([
          'anonymous@2001:db8::1',
          'DELETE',
          403,
          'admin access is disabled: no admin token configured',
        ]);
      } finally {
        await server.close();
        await locked.close();
      }
    });
  });

  describe('GET /admin/audit-log', () => {
    before(async () => {
      // 120 more entries, one second apart, so the newest-first order and the default limit show.
      for (let i = 0; i < 120; i++) {
        sys.clock.advance(1000);
        await recordAudit(
          sys.store,
          { actor: 'spec', method: 'POST', path: `/control/v1/admin/seeded/${i}`, status_code: 201, detail: null },
          { actor: 'spec' },
          sys.clock.now(),
        );
      }
    });

    it('lists entries newest first with the contract fields, 100 by default', async () => {
      const res = await client.get(AUDIT, { token: ADMIN_TOKEN });
      expectResponse(res).status(200);
      const entries = res.body.entries as Record<string, unknown>[];
      expect(entries).to.have.length(100);
      expect(Object.keys(entries[0]).sort()).to.deep.equal(['actor', 'created_at', 'detail', 'id', 'method', 'path', 'status_code']);
      expect(entries[0]).to.deep.include({ actor: 'spec', method: 'POST', path: '/control/v1/admin/seeded/119', status_code: 201, detail: null });
      // The time the request was decided (the test clock), not when the store wrote the row.
      expect(entries[0].created_at).to.equal(sys.clock.now().toISOString());
      expect(entries[1].path).to.equal('/control/v1/admin/seeded/118');
      const times = entries.map((e) => e.created_at as string);
      expect(times).to.deep.equal([...times].sort().reverse());
    });

    it('honours limit from 1 to 1000', async () => {
      const one = await client.get(`${AUDIT}?limit=1`, { token: ADMIN_TOKEN });
      expect(one.body.entries.map((e: { path: string }) => e.path)).to.deep.equal(['/control/v1/admin/seeded/119']);
      const all = await client.get(`${AUDIT}?limit=1000`, { token: ADMIN_TOKEN });
      expect(all.body.entries.length).to.be.greaterThan(120).and.lessThan(1000);
    });

    for (const limit of ['0', '1001', '-1', 'ten', '1.5']) {
      it(`422 for limit=${limit}`, async () => {
        const res = await client.get(`${AUDIT}?limit=${limit}`, { token: ADMIN_TOKEN });
        expectResponse(res).status(422);
        expect(res.body.detail.errors[0].loc).to.deep.equal(['query', 'limit']);
      });
    }

    it('is not itself audited (reads are not recorded)', async () => {
      const before = (await auditEntries(sys, 1))[0].id;
      await step(client.get(AUDIT, { token: ADMIN_TOKEN }));
      expect((await auditEntries(sys, 1))[0].id).to.equal(before);
    });
  });
});
