import { expect } from 'chai';
import { expectResponse } from '../../support/http.js';
import { GAMMA_ASN, GAMMA_EMAIL, optionId, powTicket, startVerification, type VerificationFixture } from './verification-support.js';

const CHALLENGE = '/api/v1/challenge';
const SUBMIT = '/api/v1/challenge/submit';
const CAPTCHA_FAILED = 'captcha verification failed';
const CHALLENGE_FIELDS = ['challenge_id', 'method', 'instructions', 'expires_at', 'reused', 'resend_available_in'];

describe('Identity POST /challenge', function () {
  this.timeout(90_000);
  let f: VerificationFixture;
  let email: string;
  let ssh: string;

  before(async () => {
    f = await startVerification();
    email = await optionId(f.client, GAMMA_ASN, 'email');
    ssh = await optionId(f.client, GAMMA_ASN, 'ssh');
  });
  after(() => f?.done());

  describe('e-mail option (captcha required)', () => {
    let first: Record<string, any>;
    let pass: string;

    it('refuses to issue without a valid ticket and sends nothing', async () => {
      expectResponse(await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email }))
        .status(400)
        .body({ detail: CAPTCHA_FAILED, error: 'captcha_failed' });
      expectResponse(await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_token: 'forged', captcha_pass: 'forged' }))
        .status(400)
        .detail(CAPTCHA_FAILED);
      expect(f.smtp.to(GAMMA_EMAIL)).to.have.length(0);
    });

    it('issues a challenge, mails a 6-digit code that neither the response nor the events hold, and hands out a captcha pass', async () => {
      const res = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_token: await powTicket(f.client) });
      expectResponse(res).status(201).header('cache-control', 'no-store');
      first = res.body;
      expect(first).to.have.all.keys(...CHALLENGE_FIELDS, 'sent_to', 'captcha_pass', 'captcha_pass_expires_in');
      expect(first).to.include({ method: 'email', sent_to: 'ga***@gamma.example', reused: false, resend_available_in: 60, captcha_pass_expires_in: 1800 });
      expect(Date.parse(first.expires_at) - f.sys.clock.now().getTime()).to.equal(15 * 60_000);
      pass = first.captcha_pass;
      const mails = f.smtp.to(GAMMA_EMAIL);
      expect(mails).to.have.length(1);
      expect(mails[0].from).to.equal('identity@spec.example');
      const code = f.smtp.codeFor(GAMMA_EMAIL);
      expect(code).to.match(/^\d{6}$/);
      expect(JSON.stringify(first)).not.to.contain(code);
      const stored = await f.sys.store.readStream(`challenge-${first.challenge_id}`);
      expect(stored.map((e) => e.type)).to.deep.equal(['ChallengeIssued']);
      const { code_hash, ...rest } = stored[0].data as Record<string, unknown>;
      expect(code_hash).to.match(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(rest)).not.to.contain(code).and.not.to.contain(GAMMA_EMAIL);
      const asnEvents = JSON.stringify((await f.sys.store.readStream(`asn-${GAMMA_ASN}`)).map((e) => e.data));
      expect(asnEvents).not.to.contain(pass);
    });

    it('returns the in-flight challenge within the 60 s cooldown: 201, reused, the remaining seconds, no mail; the pass skips the captcha', async () => {
      f.sys.clock.advance(20_500);
      const res = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_pass: pass });
      expectResponse(res).status(201);
      expect(res.body).to.have.all.keys(...CHALLENGE_FIELDS, 'sent_to');
      expect(res.body).to.include({ challenge_id: first.challenge_id, reused: true, resend_available_in: 40, expires_at: first.expires_at });
      expect(f.smtp.to(GAMMA_EMAIL)).to.have.length(1);
    });

    it('a fresh ticket within the cooldown also reuses, and is a new solve: a new pass', async () => {
      const res = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, 'cf-turnstile-response': await powTicket(f.client) });
      expectResponse(res).status(201).body({ challenge_id: first.challenge_id, reused: true });
      expect(res.body.captcha_pass).to.be.a('string').and.not.equal(pass);
      expect(f.smtp.to(GAMMA_EMAIL)).to.have.length(1);
    });

    it('refuses the pass for another ASN (it is bound to the ASN it was solved for)', async () => {
      const alphaEmail = await optionId(f.client, 4242420001, 'email');
      expectResponse(await f.client.post(CHALLENGE, { asn: 4242420001, option_id: alphaEmail, captcha_pass: pass }))
        .status(400)
        .detail(CAPTCHA_FAILED);
    });

    it('after the cooldown a re-send supersedes the old challenge: a new code, and the old one answers 409', async () => {
      const oldCode = f.smtp.codeFor(GAMMA_EMAIL);
      f.sys.clock.advance(40_000);
      const res = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_pass: pass });
      expectResponse(res).status(201).body({ reused: false, resend_available_in: 60 });
      expect(res.body.challenge_id).not.to.equal(first.challenge_id);
      expect(res.body).not.to.have.property('captcha_pass');
      expect(f.smtp.to(GAMMA_EMAIL)).to.have.length(2);
      expectResponse(await f.client.post(SUBMIT, { challenge_id: first.challenge_id, answer: oldCode }))
        .status(409)
        .body({ detail: 'challenge superseded by a newer one', error: 'conflict', fatal: false });
      const grant = await f.client.post(SUBMIT, { challenge_id: res.body.challenge_id, answer: f.smtp.codeFor(GAMMA_EMAIL) });
      expectResponse(grant).status(200).body({ asn: GAMMA_ASN, mntner: 'GAMMA-MNT', method: 'email' });
    });

    it('refuses the pass once its 30 minutes are over', async () => {
      f.sys.clock.advance(1800_000);
      expectResponse(await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_pass: pass }))
        .status(400)
        .detail(CAPTCHA_FAILED);
    });

    it('ends a challenge whose mail the server refuses: 503, and the next request issues a new one', async () => {
      f.sys.clock.advance(3_600_000);
      f.smtp.refuse = true;
      const refused = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_token: await powTicket(f.client) });
      expectResponse(refused).status(503).body({ error: 'temporarily_unavailable', detail: 'the verification e-mail could not be sent; try again later' });
      f.smtp.refuse = false;
      const again = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_token: await powTicket(f.client) });
      expectResponse(again).status(201).body({ reused: false });
    });
  });

  describe('ssh option (no captcha)', () => {
    it('issues without captcha material, ignores a bad ticket, and the nonce starts with the ASN prefix', async () => {
      const res = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: ssh, captcha_token: 'garbage', captcha_pass: 'garbage' });
      expectResponse(res).status(201);
      expect(res.body).to.have.all.keys(...CHALLENGE_FIELDS, 'nonce');
      expect(res.body.method).to.equal('ssh');
      expect(res.body.nonce).to.match(new RegExp(`^AS${GAMMA_ASN}-[0-9a-f]{32}$`));
      expect(res.body.instructions).to.contain('ssh-keygen -Y sign -n dn42-autopeer');
    });

    it('two requests racing for one option get one challenge', async () => {
      f.sys.clock.advance(61_000);
      const [a, b] = await Promise.all([
        f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: ssh }),
        f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: ssh }),
      ]);
      expectResponse(a).status(201);
      expectResponse(b).status(201);
      expect(a.body.challenge_id).to.equal(b.body.challenge_id);
      expect([a.body.reused, b.body.reused].sort()).to.deep.equal([false, true]);
    });
  });

  describe('option resolution', () => {
    it('answers 404 for a forged option id, an option of another ASN and an unknown ASN', async () => {
      const alphaSsh = await optionId(f.client, 4242420001, 'ssh');
      for (const [asn, option_id] of [
        [GAMMA_ASN, 'ssh-000000000000000000000000'],
        [GAMMA_ASN, alphaSsh],
        [4242429999, ssh],
      ] as const) {
        expectResponse(await f.client.post(CHALLENGE, { asn, option_id }))
          .status(404)
          .body({ error: 'not_found', fatal: false });
      }
      expectResponse(await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: 'ssh-000000000000000000000000' })).detail('verification option not found');
    });

    it('answers 422 with a detail array for a bad body', async () => {
      for (const body of [{ asn: 0, option_id: ssh }, { asn: GAMMA_ASN }, { asn: GAMMA_ASN, option_id: '' }]) {
        const res = await f.client.post(CHALLENGE, body);
        expectResponse(res).status(422).body({ error: 'invalid_request' });
        expect(res.body.detail).to.be.an('array');
      }
    });
  });

  describe('hourly limit', () => {
    it('issues at most 10 challenges per ASN per hour (reuses do not count), then 429 until the oldest leaves the hour', async () => {
      const asn = 4242420002;
      const option = await optionId(f.client, asn, 'ssh');
      const start = f.sys.clock.now().getTime();
      for (let i = 0; i < 10; i++) {
        expectResponse(await f.client.post(CHALLENGE, { asn, option_id: option }))
          .status(201)
          .body({ reused: false });
        expectResponse(await f.client.post(CHALLENGE, { asn, option_id: option }))
          .status(201)
          .body({ reused: true });
        f.sys.clock.advance(60_000);
      }
      expectResponse(await f.client.post(CHALLENGE, { asn, option_id: option }))
        .status(429)
        .body({ detail: 'too many challenges for AS4242420002; try again later', error: 'rate_limited', fatal: false });
      const otherAsn = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: ssh });
      expectResponse(otherAsn).status(201);
      f.sys.clock.advance(start + 3_600_000 - f.sys.clock.now().getTime());
      expectResponse(await f.client.post(CHALLENGE, { asn, option_id: option }))
        .status(201)
        .body({ reused: false });
      expectResponse(await f.client.post(CHALLENGE, { asn, option_id: await optionId(f.client, asn, 'pgp') })).status(429);
    });
  });

  describe('registry down', () => {
    it('answers 503 when the registry replica does not answer', async () => {
      await f.stopRegistry();
      expectResponse(await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: ssh }))
        .status(503)
        .body({ error: 'temporarily_unavailable' });
    });
  });
});

describe('Identity POST /challenge when the mail server refuses', function () {
  this.timeout(90_000);
  let f: VerificationFixture;
  let email: string;
  before(async () => {
    f = await startVerification();
    email = await optionId(f.client, GAMMA_ASN, 'email');
  });
  after(() => f?.done());

  const MAIL_FAILED = { error: 'temporarily_unavailable', detail: 'the verification e-mail could not be sent; try again later', fatal: false };

  it('a refused re-send leaves the previous code valid', async () => {
    const first = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_token: await powTicket(f.client) });
    expectResponse(first).status(201);
    const code = f.smtp.codeFor(GAMMA_EMAIL);
    f.sys.clock.advance(61_000);
    f.smtp.refuse = true;
    expectResponse(await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_pass: first.body.captcha_pass }))
      .status(503)
      .body(MAIL_FAILED);
    f.smtp.refuse = false;
    expectResponse(await f.client.post(SUBMIT, { challenge_id: first.body.challenge_id, answer: code }))
      .status(200)
      .body({ asn: GAMMA_ASN, method: 'email' });
  });

  it('after a refused re-send, the next successful one still leaves only the newest code valid', async () => {
    f.sys.clock.advance(3_600_000);
    const first = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_token: await powTicket(f.client) });
    expectResponse(first).status(201);
    const oldCode = f.smtp.codeFor(GAMMA_EMAIL);
    f.sys.clock.advance(61_000);
    f.smtp.refuse = true;
    expectResponse(await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_pass: first.body.captcha_pass })).status(503);
    f.smtp.refuse = false;
    const again = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_pass: first.body.captcha_pass });
    expectResponse(again).status(201).body({ reused: false });
    expectResponse(await f.client.post(SUBMIT, { challenge_id: first.body.challenge_id, answer: oldCode }))
      .status(409)
      .detail('challenge superseded by a newer one');
    expectResponse(await f.client.post(SUBMIT, { challenge_id: again.body.challenge_id, answer: f.smtp.codeFor(GAMMA_EMAIL) })).status(200);
  });

  it('a refused first mail keeps the captcha solve: the 503 carries the pass, and the retry needs no new ticket', async () => {
    f.sys.clock.advance(3_600_000);
    f.smtp.refuse = true;
    const refused = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_token: await powTicket(f.client) });
    expectResponse(refused)
      .status(503)
      .body({ ...MAIL_FAILED, captcha_pass_expires_in: 1800 });
    expect(refused.body.captcha_pass).to.be.a('string');
    f.smtp.refuse = false;
    const retry = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_pass: refused.body.captcha_pass });
    expectResponse(retry).status(201).body({ reused: false });
    expect(retry.body).not.to.have.property('captcha_pass');
    expectResponse(await f.client.post(SUBMIT, { challenge_id: retry.body.challenge_id, answer: f.smtp.codeFor(GAMMA_EMAIL) })).status(200);
  });
});

describe('Identity POST /challenge at the hourly limit', function () {
  this.timeout(90_000);
  let f: VerificationFixture;
  before(async () => {
    f = await startVerification();
  });
  after(() => f?.done());

  it('answers 429 before the captcha ticket is spent, and still reuses a challenge within the cooldown', async () => {
    const ssh = await optionId(f.client, GAMMA_ASN, 'ssh');
    const email = await optionId(f.client, GAMMA_ASN, 'email');
    for (let i = 0; i < 9; i++) {
      expectResponse(await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: ssh }))
        .status(201)
        .body({ reused: false });
      f.sys.clock.advance(61_000);
    }
    const tenth = await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_token: await powTicket(f.client) });
    expectResponse(tenth).status(201).body({ reused: false });
    f.sys.clock.advance(30_000);
    expectResponse(await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_pass: tenth.body.captcha_pass }))
      .status(201)
      .body({ reused: true, challenge_id: tenth.body.challenge_id });
    f.sys.clock.advance(31_000);
    const ticket = await powTicket(f.client);
    expectResponse(await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_token: ticket }))
      .status(429)
      .detail(`too many challenges for AS${GAMMA_ASN}; try again later`);
    expectResponse(await f.client.post('/api/v1/verification-options', { asn: GAMMA_ASN, captcha_token: ticket })).status(200);
  });
});

describe('Identity POST /challenge without a mail sender', function () {
  this.timeout(60_000);
  let f: VerificationFixture;
  before(async () => {
    f = await startVerification({ SMTP_URL: '' });
  });
  after(() => f?.done());

  it('answers 503 for an e-mail option before spending the ticket; ssh still works', async () => {
    const ticket = await powTicket(f.client);
    const email = await optionId(f.client, GAMMA_ASN, 'email');
    expectResponse(await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: email, captcha_token: ticket }))
      .status(503)
      .body({ detail: 'e-mail verification is unavailable: no mail sender configured', error: 'temporarily_unavailable', fatal: false });
    expectResponse(await f.client.post('/api/v1/verification-options', { asn: GAMMA_ASN, captcha_token: ticket })).status(200);
    expectResponse(await f.client.post(CHALLENGE, { asn: GAMMA_ASN, option_id: await optionId(f.client, GAMMA_ASN, 'ssh') })).status(201);
  });
});
