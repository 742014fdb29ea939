import { expect } from 'chai';
import { createControlApp } from '../../../http/control/app.js';
import { api, expectResponse } from '../../support/http.js';
import { tableRows } from '../../support/tables.js';
import { createTestSystem, startApp, type TestSystem } from '../../support/system.js';
import { addAccount, ADMIN_TOKEN, auditEntries, CAPTCHA_SECRET, loginAs, POW_ENV, solvedTicket } from './support.js';

const LOGIN = '/control/v1/auth/login';
const PASSWORD = '/control/v1/auth/password';
const AUDIT = '/control/v1/admin/audit-log';
const HOUR = 3_600_000;

describe('control server authentication', function () {
  this.timeout(60_000);
  let sys: TestSystem;
  let client: ReturnType<typeof api>;
  const closers: (() => Promise<void>)[] = [];

  async function serve(env: Record<string, string>) {
    const other = await createTestSystem({ env });
    const started = await startApp(createControlApp(other.context));
    closers.push(started.close, () => other.close());
    return { sys: other, client: api(started.url) };
  }

  before(async () => {
    ({ sys, client } = await serve(POW_ENV));
    await addAccount(sys, 'alice', 'correct horse');
    await addAccount(sys, 'bob', 'battery staple');
  });

  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  describe('login', () => {
    it('answers a token that lives 24 hours and opens /admin and /ui', async () => {
      const res = await loginAs(client, 'alice', 'correct horse');
      expectResponse(res).status(200);
      expect(res.body.token).to.match(/^[A-Za-z0-9_-]{43}$/);
      expect(res.body.expires_at).to.equal(new Date(sys.clock.now().getTime() + 24 * HOUR).toISOString());
      expectResponse(await client.get(AUDIT, { token: res.body.token })).status(200);
      // Past the guard, an unknown /ui path is a 404, not a 401.
      expectResponse(await client.get('/control/v1/ui/no-such-view', { token: res.body.token })).status(404);
    });

    it('accepts the captcha ticket under the legacy provider-branded field', async () => {
      const res = await client.post(LOGIN, { username: 'alice', password: 'correct horse', 'cf-turnstile-response': await solvedTicket(client) });
      expectResponse(res).status(200);
    });

    it('refuses an unknown user and a wrong password with the same 401 text', async () => {
      const unknown = await loginAs(client, 'mallory', 'correct horse');
      const wrong = await loginAs(client, 'bob', 'not the password');
      expectResponse(unknown).status(401).detail('invalid credentials');
      expectResponse(wrong).status(401).detail('invalid credentials');
      expect(unknown.body).to.deep.equal(wrong.body);
      await loginAs(client, 'bob', 'battery staple'); // resets bob's counter for later tests
    });

    it('refuses a missing body field with 422', async () => {
      const res = await client.post(LOGIN, { username: 'alice', captcha_token: 'x' });
      expectResponse(res).status(422);
    });
  });

  describe('captcha', () => {
    it('400 without a ticket', async () => {
      expectResponse(await client.post(LOGIN, { username: 'alice', password: 'correct horse' }))
        .status(400)
        .detail('captcha verification failed');
    });

    it('400 for a forged or malformed ticket', async () => {
      const ticket = JSON.parse(Buffer.from(await solvedTicket(client), 'base64').toString());
      ticket.solution.counter += 1;
      const forged = Buffer.from(JSON.stringify(ticket)).toString('base64');
      expectResponse(await client.post(LOGIN, { username: 'alice', password: 'correct horse', captcha_token: forged }))
        .status(400)
        .detail('captcha verification failed');
      expectResponse(await client.post(LOGIN, { username: 'alice', password: 'correct horse', captcha_token: 'not-a-ticket' }))
        .status(400)
        .detail('captcha verification failed');
    });

    it('400 when a ticket is used a second time, even on another instance', async () => {
      const ticket = await solvedTicket(client);
      expectResponse(await client.post(LOGIN, { username: 'alice', password: 'correct horse', captcha_token: ticket })).status(200);
      expectResponse(await client.post(LOGIN, { username: 'alice', password: 'correct horse', captcha_token: ticket }))
        .status(400)
        .detail('captcha verification failed');
      // A second instance on the same database knows the ticket is spent.
      const second = await startApp(createControlApp({ ...sys.context }));
      closers.push(second.close);
      const res = await api(second.url).post(LOGIN, { username: 'alice', password: 'correct horse', captcha_token: ticket });
      expectResponse(res).status(400).detail('captcha verification failed');
    });

    it('400 for a ticket whose challenge expired (10 minutes)', async () => {
      const ticket = await solvedTicket(client);
      sys.clock.advance(10 * 60_000 + 1);
      expectResponse(await client.post(LOGIN, { username: 'alice', password: 'correct horse', captcha_token: ticket }))
        .status(400)
        .detail('captcha verification failed');
    });

    it('400 for a ticket signed with another secret', async () => {
      const other = await serve({ ...POW_ENV, CAPTCHA_SECRET: `${CAPTCHA_SECRET}-other` });
      const ticket = await solvedTicket(other.client);
      expectResponse(await client.post(LOGIN, { username: 'alice', password: 'correct horse', captcha_token: ticket }))
        .status(400)
        .detail('captcha verification failed');
    });

    it('fails closed when the login captcha is not configured', async () => {
      const ticket = await solvedTicket(client);
      const unconfigured: Record<string, string>[] = [
        { ADMIN_TOKEN },
        { ADMIN_TOKEN, CONTROL_LOGIN_CAPTCHA: 'pow' },
        { ADMIN_TOKEN, CONTROL_LOGIN_CAPTCHA: 'external' },
      ];
      for (const env of unconfigured) {
        const other = await serve(env);
        await addAccount(other.sys, 'alice', 'correct horse');
        const res = await other.client.post(LOGIN, { username: 'alice', password: 'correct horse', captcha_token: ticket });
        expectResponse(res).status(400).detail('captcha verification failed');
        expectResponse(await other.client.get('/control/v1/auth/captcha')).status(404);
      }
    });
  });

  describe('failure block', () => {
    async function fail(username: string) {
      return loginAs(client, username, 'wrong password');
    }

    it('blocks a name for 15 minutes after 5 consecutive failures, even with the right password', async () => {
      await addAccount(sys, 'carol', 'carol password');
      for (let i = 0; i < 5; i++)
        expectResponse(await fail('carol'))
          .status(401)
          .detail('invalid credentials');
      expectResponse(await fail('carol'))
        .status(429)
        .detail('too many attempts');
      expectResponse(await loginAs(client, 'carol', 'carol password'))
        .status(429)
        .detail('too many attempts');
      sys.clock.advance(15 * 60_000 - 1);
      expectResponse(await loginAs(client, 'carol', 'carol password'))
        .status(429)
        .detail('too many attempts');
      sys.clock.advance(1);
      expectResponse(await loginAs(client, 'carol', 'carol password')).status(200);
    });

    it('a success resets the count', async () => {
      await addAccount(sys, 'dave', 'dave password');
      for (let i = 0; i < 4; i++) expectResponse(await fail('dave')).status(401);
      expectResponse(await loginAs(client, 'dave', 'dave password')).status(200);
      for (let i = 0; i < 4; i++) expectResponse(await fail('dave')).status(401);
      expectResponse(await loginAs(client, 'dave', 'dave password')).status(200);
    });

    it('counts per username: another name is not blocked, and an unknown name is blocked like a known one', async () => {
      for (let i = 0; i < 5; i++) expectResponse(await fail('nobody')).status(401);
      expectResponse(await fail('nobody'))
        .status(429)
        .detail('too many attempts');
      expectResponse(await loginAs(client, 'alice', 'correct horse')).status(200);
    });

    it('10 parallel wrong logins on one name give exactly 5 × 401 and 5 × 429', async () => {
      await addAccount(sys, 'gus', 'gus password');
      const tickets = await Promise.all(Array.from({ length: 10 }, () => solvedTicket(client)));
      const answers = await Promise.all(tickets.map((captcha_token) => client.post(LOGIN, { username: 'gus', password: 'wrong', captcha_token })));
      expect(answers.map((r) => r.status).sort()).to.deep.equal([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
      const types = (await sys.store.readStream('account-gus')).map((e) => e.type);
      expect(types).to.deep.equal(['AccountCreated', 'LoginFailed', 'LoginFailed', 'LoginFailed', 'LoginFailed', 'LoginFailed', 'LoginBlocked']);
    });

    it('the block holds across instances', async () => {
      await addAccount(sys, 'erin', 'erin password');
      const second = await startApp(createControlApp({ ...sys.context }));
      closers.push(second.close);
      const other = api(second.url);
      for (let i = 0; i < 3; i++) expectResponse(await fail('erin')).status(401);
      for (let i = 0; i < 2; i++) expectResponse(await loginAs(other, 'erin', 'wrong')).status(401);
      expectResponse(await loginAs(client, 'erin', 'erin password')).status(429);
    });
  });

  describe('bearer tokens on /admin and /ui', () => {
    it('401 with a missing or a wrong token', async () => {
      for (const path of [AUDIT, '/control/v1/ui/anything']) {
        expectResponse(await client.get(path))
          .status(401)
          .detail('missing bearer token');
        expectResponse(await client.get(path, { token: 'not-a-token' }))
          .status(401)
          .detail('invalid or expired token');
        expectResponse(await client.get(path, { headers: { authorization: 'Basic abc' } }))
          .status(401)
          .detail('missing bearer token');
      }
    });

    it('accepts the static admin token on both', async () => {
      expectResponse(await client.get(AUDIT, { token: ADMIN_TOKEN })).status(200);
      expectResponse(await client.get('/control/v1/ui/no-such-view', { token: ADMIN_TOKEN })).status(404);
    });

    it('401 once a session is past its 24 hours', async () => {
      const { body } = await loginAs(client, 'alice', 'correct horse');
      sys.clock.advance(24 * HOUR - 1);
      expectResponse(await client.get(AUDIT, { token: body.token })).status(200);
      sys.clock.advance(1);
      expectResponse(await client.get(AUDIT, { token: body.token }))
        .status(401)
        .detail('invalid or expired token');
      expectResponse(await client.get('/control/v1/ui/x', { token: body.token }))
        .status(401)
        .detail('invalid or expired token');
    });

    it('403 everywhere, login included, when no static admin token is configured', async () => {
      const { client: locked, sys: lockedSys } = await serve({ CONTROL_LOGIN_CAPTCHA: 'pow', CAPTCHA_SECRET });
      await addAccount(lockedSys, 'alice', 'correct horse');
      const detail = 'admin access is disabled: no admin token configured';
      expectResponse(await locked.get(AUDIT))
        .status(403)
        .detail(detail);
      expectResponse(await locked.get(AUDIT, { token: ADMIN_TOKEN }))
        .status(403)
        .detail(detail);
      expectResponse(await locked.get('/control/v1/ui/x'))
        .status(403)
        .detail(detail);
      expectResponse(await locked.post('/control/v1/admin/nodes', {}))
        .status(403)
        .detail(detail);
      expectResponse(await locked.get('/control/v1/auth/captcha'))
        .status(403)
        .detail(detail);
      expectResponse(await locked.post(LOGIN, { username: 'alice', password: 'correct horse', captcha_token: await solvedTicket(client) }))
        .status(403)
        .detail(detail);
      expectResponse(await locked.post(PASSWORD, { old_password: 'correct horse', new_password: 'whatever123' }))
        .status(403)
        .detail(detail);
    });
  });

  describe('password change', () => {
    it('204, revokes every live session of the user (the current one too) and takes the new password', async () => {
      await addAccount(sys, 'frank', 'frank password');
      const first = (await loginAs(client, 'frank', 'frank password')).body.token;
      const second = (await loginAs(client, 'frank', 'frank password')).body.token;
      const alice = (await loginAs(client, 'alice', 'correct horse')).body.token;
      const res = await client.post(PASSWORD, { old_password: 'frank password', new_password: 'frank new password' }, { token: first });
      expectResponse(res).status(204);
      for (const token of [first, second])
        expectResponse(await client.get(AUDIT, { token }))
          .status(401)
          .detail('invalid or expired token');
      expectResponse(await client.get(AUDIT, { token: alice })).status(200);
      expectResponse(await loginAs(client, 'frank', 'frank password'))
        .status(401)
        .detail('invalid credentials');
      const fresh = await loginAs(client, 'frank', 'frank new password');
      expectResponse(fresh).status(200);
      expectResponse(await client.get(AUDIT, { token: fresh.body.token })).status(200);
    });

    it('403 for the static admin token', async () => {
      const res = await client.post(PASSWORD, { old_password: 'x', new_password: 'long enough' }, { token: ADMIN_TOKEN });
      expectResponse(res).status(403).detail('password change needs an account session token');
    });

    it('401 without a token, with a revoked one, or with a wrong old password', async () => {
      expectResponse(await client.post(PASSWORD, { old_password: 'x', new_password: 'long enough' }))
        .status(401)
        .detail('missing bearer token');
      const token = (await loginAs(client, 'bob', 'battery staple')).body.token;
      const wrong = await client.post(PASSWORD, { old_password: 'not it', new_password: 'long enough' }, { token });
      expectResponse(wrong).status(401).detail('invalid credentials');
      expectResponse(await client.get(AUDIT, { token })).status(200);
    });

    it('422 for a new password under 8 characters', async () => {
      const token = (await loginAs(client, 'bob', 'battery staple')).body.token;
      const res = await client.post(PASSWORD, { old_password: 'battery staple', new_password: 'short' }, { token });
      expectResponse(res).status(422);
      expect(res.body.detail.errors[0].loc).to.deep.equal(['body', 'new_password']);
    });
  });

  describe('audit', () => {
    it('records logins, failures, captcha refusals, blocks and password changes with the endpoint path', async () => {
      const { client: c, sys: s } = await serve(POW_ENV);
      await addAccount(s, 'gina', 'gina password');
      const ip = { 'cf-connecting-ip': '203.0.113.9' };
      // Audit writes land after their response; waiting for each keeps the log in request order.
      const step = async <T>(request: Promise<T>): Promise<T> => {
        const res = await request;
        await s.context.background.drain();
        return res;
      };
      expectResponse(await step(loginAs(c, 'gina', 'gina password', ip))).status(200);
      await step(c.post(LOGIN, { username: 'gina', password: 'gina password' }, { headers: ip }));
      for (let i = 0; i < 5; i++) await step(loginAs(c, 'gina', 'wrong password', { 'x-forwarded-for': '198.51.100.7, 10.0.0.1' }));
      await step(loginAs(c, 'gina', 'gina password', ip));
      s.clock.advance(15 * 60_000);
      const again = await step(loginAs(c, 'gina', 'gina password'));
      await step(c.post(PASSWORD, { old_password: 'gina password', new_password: 'gina password 2' }, { token: again.body.token }));
      await step(c.post(PASSWORD, { old_password: 'x', new_password: 'long enough' }, { token: ADMIN_TOKEN }));

      const rows = (await auditEntries(s)).reverse().map((e) => [e.actor, e.method, e.path, e.status_code, e.detail]);
      expect(rows).to.deep.equal([
        ['gina', 'POST', LOGIN, 200, 'login succeeded'],
        ['gina@203.0.113.9', 'POST', LOGIN, 400, 'captcha verification failed'],
        ...Array.from({ length: 5 }, () => ['gina@198.51.100.7', 'POST', LOGIN, 401, 'invalid credentials']),
        ['gina@203.0.113.9', 'POST', LOGIN, 429, 'too many attempts'],
        ['gina', 'POST', LOGIN, 200, 'login succeeded'],
        ['gina', 'POST', PASSWORD, 204, 'password changed; 2 session(s) revoked'],
        ['admin', 'POST', PASSWORD, 403, 'password change needs an account session token'],
      ]);
    });

    it('a rebuild of the accounts projection reproduces accounts and sessions row for row', async () => {
      const before = [await tableRows(sys.pool, 'accounts', 'username'), await tableRows(sys.pool, 'account_sessions', 'session_id')];
      expect(before[1]).to.not.deep.equal([]);
      await sys.projections.rebuild(['accounts']);
      expect([await tableRows(sys.pool, 'accounts', 'username'), await tableRows(sys.pool, 'account_sessions', 'session_id')]).to.deep.equal(before);
    });

    it('never writes a password into an event or its metadata', async () => {
      const { client: c, sys: s } = await serve(POW_ENV);
      await addAccount(s, 'henry', 'henry secret one');
      const token = (await loginAs(c, 'henry', 'henry secret one')).body.token;
      await loginAs(c, 'henry', 'henry wrong guess');
      await c.post(PASSWORD, { old_password: 'henry secret one', new_password: 'henry secret two' }, { token });
      await s.context.background.drain();
      const { rows } = await s.pool.query(`SELECT type, data::text || metadata::text AS text FROM events`);
      expect(rows.map((r) => r.type)).to.include.members(['AccountCreated', 'LoginSucceeded', 'LoginFailed', 'PasswordChanged', 'AuditRecorded']);
      for (const secret of ['henry secret one', 'henry wrong guess', 'henry secret two', token]) {
        expect(
          rows.filter((r) => r.text.includes(secret)),
          secret,
        ).to.deep.equal([]);
      }
    });
  });
});
