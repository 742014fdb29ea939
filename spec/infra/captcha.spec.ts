import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { solveChallenge } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import { expect } from 'chai';
import { createCaptcha, encodeTicket, eventStoreSpentTickets, externalCaptcha, powCaptcha, type SpentTickets } from '../../infra/captcha/index.js';
import { createTestSystem, type TestSystem } from '../support/system.js';

const SECRET = 'captcha-spec-secret-0123456789';

describe('captcha providers', function () {
  this.timeout(30_000);
  let sys: TestSystem;
  let spent: SpentTickets;
  const now = new Date('2026-11-01T12:00:00Z');

  before(async () => {
    sys = await createTestSystem();
    spent = eventStoreSpentTickets(sys.store);
  });
  after(() => sys.close());

  describe('pow (ALTCHA)', () => {
    it('accepts a solved challenge once, also when two verifications race', async () => {
      const pow = powCaptcha({ secret: SECRET, spent });
      const challenge = await pow.issueChallenge(now);
      const solution = await solveChallenge({ challenge, deriveKey });
      const ticket = encodeTicket(challenge, solution!);
      const results = await Promise.all([pow.verify(ticket, { now }), pow.verify(ticket, { now }), pow.verify(ticket, { now })]);
      expect(results.filter(Boolean)).to.have.length(1);
      expect(await pow.verify(ticket, { now })).to.equal(false);
    });

    it('refuses a challenge past its expiry by the caller clock', async () => {
      const pow = powCaptcha({ secret: SECRET, spent, ttlMs: 1000 });
      const challenge = await pow.issueChallenge(now);
      const ticket = encodeTicket(challenge, (await solveChallenge({ challenge, deriveKey }))!);
      expect(await pow.verify(ticket, { now: new Date(now.getTime() + 1000) })).to.equal(false);
      expect(await pow.verify(ticket, { now: new Date(now.getTime() + 999) })).to.equal(true);
    });

    it('refuses a challenge whose signed expiry was altered', async () => {
      const pow = powCaptcha({ secret: SECRET, spent, ttlMs: 1000 });
      const challenge = await pow.issueChallenge(now);
      const solution = (await solveChallenge({ challenge, deriveKey }))!;
      challenge.parameters.data = { expires_at: '2099-01-01T00:00:00.000Z' };
      expect(await pow.verify(encodeTicket(challenge, solution), { now: new Date(now.getTime() + 5000) })).to.equal(false);
    });

    it('a pow setting without its secret, none and an unset kind refuse every ticket', async () => {
      for (const captcha of [createCaptcha({ kind: 'pow' }, spent), createCaptcha({ kind: 'none' }, spent), createCaptcha({ kind: undefined }, spent)]) {
        expect(captcha.kind).to.equal('none');
        expect(await captcha.verify('anything', { now })).to.equal(false);
      }
    });
  });

  describe('external (siteverify)', () => {
    let server: Server;
    let url: string;
    const calls: URLSearchParams[] = [];
    let answer: Record<string, unknown> = { success: true, action: 'control_login' };

    before(async () => {
      server = createServer((req, res) => {
        let body = '';
        req.on('data', (c) => (body += c));
        req.on('end', () => {
          calls.push(new URLSearchParams(body));
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(answer));
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/siteverify`;
    });
    after(() => new Promise<void>((r) => server.close(() => r())));

    it('posts secret, ticket and client address, and accepts the ticket once', async () => {
      const captcha = externalCaptcha({ verifyUrl: url, secret: 'site-secret', expectedAction: 'control_login', spent });
      answer = { success: true, action: 'control_login' };
      expect(await captcha.verify('ticket-1', { now, remoteIp: '203.0.113.5' })).to.equal(true);
      expect(Object.fromEntries(calls.at(-1)!)).to.deep.equal({ secret: 'site-secret', response: 'ticket-1', remoteip: '203.0.113.5' });
      expect(await captcha.verify('ticket-1', { now })).to.equal(false);
    });

    it('refuses an unsuccessful answer, another action and an unreachable provider', async () => {
      const captcha = externalCaptcha({ verifyUrl: url, secret: 'site-secret', expectedAction: 'control_login', spent });
      answer = { success: false, 'error-codes': ['invalid-input-response'] };
      expect(await captcha.verify('ticket-2', { now })).to.equal(false);
      answer = { success: true, action: 'signup' };
      expect(await captcha.verify('ticket-3', { now })).to.equal(false);
      const down = externalCaptcha({ verifyUrl: 'http://127.0.0.1:1/siteverify', secret: 'site-secret', spent });
      expect(await down.verify('ticket-4', { now })).to.equal(false);
    });
  });
});
