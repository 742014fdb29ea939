import { expect } from 'chai';
import { AUDIT_PATH_LIMIT } from '../../../commands/audit.js';
import { createControlApp } from '../../../http/control/app.js';
import { ANONYMOUS_REFUSALS, flushAnonymousRefusals } from '../../../http/shared/audit.js';
import { serve, type System } from '../../../cli/system.js';
import { api, expectResponse } from '../../support/http.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';
import { node } from './fleet/support.js';
import { addAccount, ADMIN_TOKEN, auditEntries, loginAs, POW_ENV, solvedTicket } from './support.js';

/**
 * What an unauthenticated flood may add to the database at most (docs/decisions.md,
 * HTTP hardening): 31 entries a minute per instance, each under 3 KB with its
 * event, stream and read-model rows and their indexes, plus page slack.
 */
const FLOOD_GROWTH_BOUND_BYTES = 512 * 1024;

describe('control audit: in the write, bounded for anonymous clients', function () {
  this.timeout(180_000);
  let sys: TestSystem;
  let client: ReturnType<typeof api>;
  let close: () => Promise<void>;

  beforeEach(async () => {
    sys = await createTestSystem({ env: POW_ENV });
    ({ close } = await startApp(createControlApp(sys.context)).then((s) => ((client = api(s.url)), s)));
  });

  afterEach(async () => {
    await close?.();
    await sys?.close();
  });

  it("commits an acknowledged write's entry in the write's own transaction, before the answer", async () => {
    const res = await client.post('/control/v1/admin/nodes', node('fra1'), { token: ADMIN_TOKEN });
    expectResponse(res).status(201);
    // No background work is waited for: the entry is there as soon as the answer.
    const [entry] = (await sys.pool.query(`SELECT actor, method, path, status_code FROM audit_log`)).rows;
    expect(entry).to.deep.equal({ actor: 'admin', method: 'POST', path: '/control/v1/admin/nodes', status_code: 201 });
    const events = await sys.store.readAll(undefined, 100);
    const audit = events.filter((e) => e.type === 'AuditRecorded');
    const created = events.find((e) => e.type === 'NodeCreated');
    expect(audit).to.have.length(1);
    expect(audit[0].position.tx).to.equal(created!.position.tx);
    expect(audit[0].metadata.requestId).to.equal(res.headers.get('x-request-id'));
    await sys.context.background.drain();
    expect(await auditEntries(sys)).to.have.length(1);
  });

  it('records a write refused after authentication once, with its final status, after the answer', async () => {
    await client.post('/control/v1/admin/nodes', node('fra1'), { token: ADMIN_TOKEN });
    expectResponse(await client.post('/control/v1/admin/nodes', node('fra1'), { token: ADMIN_TOKEN })).status(409);
    const rows = (await auditEntries(sys)).map((e) => [e.actor, e.status_code]);
    expect(rows).to.deep.equal([
      ['admin', 409],
      ['admin', 201],
    ]);
  });

  it('records a login and its audit entry together, and a counted login failure with its 401', async () => {
    await addAccount(sys, 'gina', 'gina password');
    expectResponse(await loginAs(client, 'gina', 'gina password')).status(200);
    expectResponse(await loginAs(client, 'gina', 'wrong password')).status(401);
    const rows = (await auditEntries(sys)).reverse().map((e) => [e.actor, e.status_code, e.detail]);
    expect(rows).to.deep.equal([
      ['gina', 200, 'login succeeded'],
      ['gina@127.0.0.1', 401, 'invalid credentials'],
    ]);
  });

  it('audits a login with a NUL in the username like any other refused login', async () => {
    const res = await client.post('/control/v1/auth/login', { username: 'ad\u0000min', password: 'x', captcha_token: await solvedTicket(client) });
    expect(res.status).to.be.within(400, 499);
    const [entry] = await auditEntries(sys, 1);
    expect([entry.method, entry.path, entry.status_code]).to.deep.equal(['POST', '/control/v1/auth/login', res.status]);
    expect(entry.actor).to.not.contain('\u0000');
  });

  it(`keeps ${AUDIT_PATH_LIMIT} characters of a long path`, async () => {
    const long = `/control/v1/admin/nodes/${'a'.repeat(12 * 1024)}`;
    expectResponse(await client.delete(long)).status(401);
    const [entry] = await auditEntries(sys, 1);
    expect(entry.path).to.have.length(AUDIT_PATH_LIMIT);
    expect(entry.path.endsWith('…')).to.equal(true);
    expect(long.startsWith(entry.path.slice(0, -1))).to.equal(true);
  });

  it('grows the database by a bounded amount under 1,000 anonymous writes with 12 KB paths, and counts every one', async () => {
    const size = async () => Number((await sys.pool.query(`SELECT pg_database_size(current_database()) AS n`)).rows[0].n);
    // Settle what start-up wrote, so the measurement holds only the flood.
    await client.post('/control/v1/admin/warm-up', {});
    await sys.context.background.drain();
    await flushAnonymousRefusals(sys.context);
    await sys.context.background.drain();
    await sys.pool.query('CHECKPOINT');
    const before = await size();
    const entriesBefore = (await auditEntries(sys)).length;

    const FLOOD = 1000;
    const methods = ['POST', 'PUT', 'PATCH', 'DELETE'];
    for (let i = 0; i < FLOOD; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          client
            .send(methods[(i + j) % 4], `/control/v1/admin/nodes/${String(i + j).padStart(4, '0')}${'x'.repeat(12 * 1024)}`, {
              headers: { 'x-forwarded-for': `198.51.100.${(i + j) % 200}` },
            })
            .then((res) => expect(res.status).to.equal(401)),
        ),
      );
    }
    await sys.context.background.drain();
    await flushAnonymousRefusals(sys.context);
    await sys.context.background.drain();
    await sys.pool.query('CHECKPOINT');
    const grown = (await size()) - before;

    const entries = (await auditEntries(sys)).slice(0, (await auditEntries(sys)).length - entriesBefore);
    const single = entries.filter((e) => !e.detail?.includes('counted, not recorded one by one'));
    const aggregate = entries.filter((e) => e.detail?.includes('counted, not recorded one by one'));
    expect(single).to.have.length(ANONYMOUS_REFUSALS.total);
    expect(single.every((e) => e.path.length <= AUDIT_PATH_LIMIT && e.status_code === 401)).to.equal(true);
    expect(aggregate).to.have.length(1);
    // Every refusal is visible: the ones recorded singly plus the aggregate's count.
    expect(aggregate[0].detail).to.match(new RegExp(`^${FLOOD - ANONYMOUS_REFUSALS.total} more refused requests`));
    expect(aggregate[0].status_code).to.equal(401);
    expect(grown, `database grew by ${grown} bytes`).to.be.below(FLOOD_GROWTH_BOUND_BYTES);
  });

  it('bounds one address to a few entries a window while other addresses are still recorded one by one', async () => {
    const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
    for (let i = 0; i < 12; i++) await client.delete('/control/v1/admin/nodes/a', from('203.0.113.1'));
    await client.delete('/control/v1/admin/nodes/b', from('203.0.113.2'));
    await sys.context.background.drain();
    const singles = (await auditEntries(sys)).map((e) => e.actor);
    expect(singles.filter((a) => a === 'anonymous@203.0.113.1')).to.have.length(ANONYMOUS_REFUSALS.perAddress);
    expect(singles.filter((a) => a === 'anonymous@203.0.113.2')).to.have.length(1);
    // A new window writes the previous window's aggregate.
    sys.clock.advance(ANONYMOUS_REFUSALS.windowMs);
    await client.delete('/control/v1/admin/nodes/c', from('203.0.113.1'));
    await sys.context.background.drain();
    const entries = await auditEntries(sys);
    const aggregate = entries.find((e) => e.detail?.includes('counted, not recorded one by one'));
    expect([aggregate?.actor, aggregate?.method, aggregate?.path, aggregate?.detail?.split(' ')[0]]).to.deep.equal([
      'anonymous@203.0.113.1',
      'DELETE',
      '/control/v1/admin/nodes/a',
      String(12 - ANONYMOUS_REFUSALS.perAddress),
    ]);
    expect(entries.filter((e) => e.path === '/control/v1/admin/nodes/c').map((e) => e.actor)).to.deep.equal(['anonymous@203.0.113.1']);
  });
});

describe('control audit: the anonymous-refusal aggregate at shutdown', function () {
  this.timeout(60_000);
  let sys: TestSystem;

  before(async () => {
    sys = await createTestSystem({ env: { ...POW_ENV, CONTROL_PORT: '0' } });
  });
  after(async () => {
    await sys?.close();
  });

  it("writes the window's counted refusals when the served roles stop, not a minute later or never", async () => {
    const running = await serve(sys as unknown as System, ['control']);
    const client = api(`http://127.0.0.1:${running.servers[0].port}`);
    for (let i = 0; i < 8; i++) expectResponse(await client.delete('/control/v1/admin/nodes/a', { headers: { 'x-forwarded-for': '203.0.113.9' } })).status(401);
    await sys.context.background.drain();
    const counted = (e: { detail?: string | null }) => e.detail?.includes('counted, not recorded one by one');
    // The barrier: the singly recorded ones are in, the aggregate is still only counted.
    expect((await auditEntries(sys)).filter((e) => e.actor === 'anonymous@203.0.113.9')).to.have.length(ANONYMOUS_REFUSALS.perAddress);
    expect((await auditEntries(sys)).filter(counted)).to.have.length(0);
    await running.stop();
    await sys.context.background.drain();
    const aggregate = (await auditEntries(sys)).filter(counted);
    expect(aggregate.map((e) => e.detail?.split(' ')[0])).to.deep.equal([String(8 - ANONYMOUS_REFUSALS.perAddress)]);
  });
});
