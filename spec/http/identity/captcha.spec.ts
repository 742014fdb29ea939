import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { createIdentityApp } from '../../../http/identity/app.js';
import { loadConfig } from '../../../infra/config.js';
import { PgEventStore } from '../../../infra/eventstore/postgres/store.js';
import { captchaDescriptor, PEERING_VERIFY_ACTION } from '../../../infra/identity/captcha.js';
import { api, expectResponse } from '../../support/http.js';
import { startApp } from '../../support/system.js';
import { GAMMA_ASN, GAMMA_EMAIL, powTicket, startVerification, type VerificationFixture } from './verification-support.js';

const OPTIONS = '/api/v1/verification-options';
const CHALLENGE = '/api/v1/challenge';
const PUZZLE = '/api/v1/captcha/challenge';
const CAPTCHA_FAILED = 'captcha verification failed';

describe('Identity captcha', function () {
  this.timeout(60_000);

  describe('pow', () => {
    let f: VerificationFixture;
    let second: { url: string; close(): Promise<void> };
    before(async () => {
      f = await startVerification();
      // A second instance: its own configuration object and event store over the same database.
      const config = loadConfig({ ...Object.fromEntries(Object.entries(process.env)), ...envOf(f) });
      const store = new PgEventStore({ pool: f.sys.pool, log: f.sys.log });
      second = await startApp(createIdentityApp({ ...f.sys.context, config, store }));
    });
    after(async () => {
      await second?.close();
      await f?.done();
    });

    it('advertises the puzzle endpoint and serves ALTCHA puzzles there, never cached', async () => {
      expect(captchaDescriptor(f.sys.config)).to.deep.equal({ kind: 'pow', endpoint: PUZZLE });
      const res = await f.client.get(PUZZLE);
      expectResponse(res).status(200).header('cache-control', 'no-store');
      expect(res.body.parameters).to.include({ algorithm: 'SHA-256' });
      expect(res.body.signature).to.be.a('string');
    });

    it('spends a ticket once across instances', async () => {
      const ticket = await powTicket(f.client);
      expectResponse(await api(second.url).post(OPTIONS, { asn: GAMMA_ASN, captcha_token: ticket })).status(200);
      expectResponse(await f.client.post(OPTIONS, { asn: GAMMA_ASN, captcha_token: ticket }))
        .status(400)
        .detail(CAPTCHA_FAILED);
    });

    it('refuses a puzzle solved after its expiry by the service clock', async () => {
      const ticket = await powTicket(f.client);
      f.sys.clock.advance(10 * 60_000);
      expectResponse(await f.client.post(OPTIONS, { asn: GAMMA_ASN, captcha_token: ticket }))
        .status(400)
        .detail(CAPTCHA_FAILED);
    });
  });

  describe('pow without CAPTCHA_SECRET', () => {
    let f: VerificationFixture;
    before(async () => {
      f = await startVerification({ CAPTCHA_SECRET: '' });
    });
    after(() => f?.done());

    it('fails closed: no puzzle (503), every ticket refused, e-mail options still require a captcha', async () => {
      expectResponse(await f.client.get(PUZZLE))
        .status(503)
        .body({ error: 'temporarily_unavailable' });
      expectResponse(await f.client.post(OPTIONS, { asn: GAMMA_ASN, captcha_token: 'anything' }))
        .status(400)
        .detail(CAPTCHA_FAILED);
    });
  });

  describe('external', () => {
    let f: VerificationFixture;
    let provider: FakeSiteverify;
    before(async () => {
      provider = await new FakeSiteverify().start();
      f = await startVerification({
        CAPTCHA_KIND: 'external',
        CAPTCHA_VERIFY_URL: provider.url,
        CAPTCHA_VERIFY_SECRET: 'siteverify-secret-for-specs',
        CAPTCHA_WIDGET_URL: 'https://captcha.example/widget.js',
      });
    });
    after(async () => {
      await f?.done();
      await provider?.close();
    });

    it('hands clients the widget script as endpoint and serves no puzzle', async () => {
      expect(captchaDescriptor(f.sys.config)).to.deep.equal({ kind: 'external', endpoint: 'https://captcha.example/widget.js' });
      expectResponse(await f.client.get(PUZZLE))
        .status(404)
        .body({ error: 'not_found' });
    });

    it('accepts a ticket whose widget action is peering-verify, once, and sends the secret to siteverify', async () => {
      expectResponse(await f.client.post(OPTIONS, { asn: GAMMA_ASN, captcha_token: 'verify-1' })).status(200);
      expect(provider.calls.at(-1)).to.include({ secret: 'siteverify-secret-for-specs', response: 'verify-1' });
      expectResponse(await f.client.post(OPTIONS, { asn: GAMMA_ASN, captcha_token: 'verify-1' }))
        .status(400)
        .detail(CAPTCHA_FAILED);
    });

    it('refuses a ticket made by the login widget (action control_login) and one the provider rejects', async () => {
      expectResponse(await f.client.post(OPTIONS, { asn: GAMMA_ASN, captcha_token: 'login-1' }))
        .status(400)
        .detail(CAPTCHA_FAILED);
      expectResponse(await f.client.post(OPTIONS, { asn: GAMMA_ASN, captcha_token: 'bogus-1' }))
        .status(400)
        .detail(CAPTCHA_FAILED);
    });

    it('lets a challenge for an e-mail option pass with an external ticket, and returns a pass', async () => {
      const options = (await f.client.post(OPTIONS, { asn: GAMMA_ASN, captcha_token: 'verify-2' })).body.options;
      const email = options.find((o: { kind: string }) => o.kind === 'email');
      expect(email.captcha_required).to.equal(true);
      const res = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email.id, 'cf-turnstile-response': 'verify-3' });
      expectResponse(res).status(201);
      expect(res.body.captcha_pass).to.be.a('string');
      expect(f.smtp.to(GAMMA_EMAIL)).to.have.length(1);
    });
  });

  describe('none', () => {
    let f: VerificationFixture;
    before(async () => {
      f = await startVerification({ CAPTCHA_KIND: 'none' });
    });
    after(() => f?.done());

    it('leaves the flow open: options without a ticket, nothing requires a captcha, no pass, no puzzle', async () => {
      expect(captchaDescriptor(f.sys.config)).to.deep.equal({ kind: 'none', endpoint: null });
      const res = await f.client.post(OPTIONS, { asn: GAMMA_ASN });
      expectResponse(res).status(200);
      expect(res.body.options.map((o: { captcha_required: boolean }) => o.captcha_required)).to.deep.equal([false, false, false]);
      const email = res.body.options.find((o: { kind: string }) => o.kind === 'email');
      const challenge = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email.id });
      expectResponse(challenge).status(201);
      expect(challenge.body).not.to.have.property('captcha_pass');
      expectResponse(await f.client.get(PUZZLE)).status(404);
    });
  });
});

/** The environment a fixture's system was started with (for a second instance of it). */
function envOf(f: VerificationFixture): Record<string, string> {
  const c = f.sys.config;
  return {
    DATABASE_URL: f.sys.db.url,
    LOG_LEVEL: 'silent',
    REGISTRY_URL: c.registryUrl!,
    REGISTRY_SERVICE_TOKEN: c.registryServiceToken!,
    IDENTITY_ISSUER: c.identityIssuer,
    IDENTITY_KEY_SECRET: c.identityKeySecret!,
    CAPTCHA_KIND: c.captchaKind,
    CAPTCHA_SECRET: c.captchaSecret!,
    SMTP_URL: c.smtpUrl!,
  };
}

/**
 * A Turnstile-style siteverify endpoint: `verify-*` tickets succeed with the
 * action `peering-verify`, `login-*` with `control_login`, anything else fails.
 * Like the real provider it does not refuse replays itself; the service must.
 */
class FakeSiteverify {
  readonly calls: Record<string, string>[] = [];
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const form = Object.fromEntries(new URLSearchParams(body));
        this.calls.push(form);
        const ticket = form.response ?? '';
        const answer = ticket.startsWith('verify-')
          ? { success: true, action: PEERING_VERIFY_ACTION }
          : ticket.startsWith('login-')
            ? { success: true, action: 'control_login' }
            : { success: false, 'error-codes': ['invalid-input-response'] };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/siteverify`;
    return this;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
