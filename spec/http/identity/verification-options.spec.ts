import { expect } from 'chai';
import { optionId as replicaOptionId } from '../../../domain/registry/options.js';
import { expectResponse } from '../../support/http.js';
import { ALPHA_FPR, ALPHA_KEY } from '../../support/registry.js';
import { GAMMA_ASN, powTicket, startVerification, type VerificationFixture } from './verification-support.js';

const PATH = '/api/v1/verification-options';
const CAPTCHA_FAILED = 'captcha verification failed';

describe('Identity POST /verification-options', function () {
  this.timeout(60_000);
  let f: VerificationFixture;
  const from = (ip: string) => ({ headers: { 'cf-connecting-ip': ip } });

  before(async () => {
    f = await startVerification();
  });
  after(() => f?.done());

  it('lists the options of an ASN per maintainer, e-mail masked, with the replica ids and the server captcha policy', async () => {
    const res = await f.client.post(PATH, { asn: 4242420001, captcha_token: await powTicket(f.client) });
    expectResponse(res).status(200).header('cache-control', 'no-store');
    expect(res.body).to.include({ asn: 4242420001, as_name: 'ALPHA-AS', display_name: 'AS4242420001 (ALPHA-AS)' });
    expect(res.body.mntners).to.deep.equal(['ALPHA-MNT', 'BETA-MNT']);
    for (const option of res.body.options) {
      expect(option).to.have.all.keys('id', 'kind', 'method', 'value', 'comment', 'mntner', 'captcha_required');
      expect(option.captcha_required, `${option.kind} policy`).to.equal(option.kind === 'email');
    }
    const emails = (mntner: string) =>
      res.body.options.filter((o: { kind: string; mntner: string }) => o.kind === 'email' && o.mntner === mntner).map((o: { value: string }) => o.value);
    expect(emails('ALPHA-MNT')).to.deep.equal(['al***@alpha.example', 'n***@alpha.example', 'ca***@alpha.example']);
    expect(emails('BETA-MNT'), 'the aut-num contacts count for every maintainer').to.deep.equal(['al***@alpha.example', 'n***@alpha.example']);
    expect(res.text).not.to.contain('alice@').and.not.to.contain('noc@').and.not.to.contain('carol@');
    const ssh = res.body.options.find((o: { value: string }) => o.value === ALPHA_KEY);
    expect(ssh).to.include({ id: replicaOptionId('ALPHA-MNT', 'ssh', ALPHA_KEY), kind: 'ssh', mntner: 'ALPHA-MNT', method: 'ssh-ed25519' });
    const pgp = res.body.options.find((o: { value: string }) => o.value === ALPHA_FPR);
    expect(pgp).to.include({ id: replicaOptionId('ALPHA-MNT', 'pgp', ALPHA_FPR), kind: 'pgp', method: 'pgp-fingerprint' });
    expect(res.body.options.filter((o: { mntner: string }) => o.mntner === 'BETA-MNT').map((o: { kind: string }) => o.kind)).to.deep.equal([
      'pgp',
      'ssh',
      'email',
      'email',
    ]);
  });

  it('answers 422 with a detail array for an ASN of invalid syntax or outside 1..4294967295', async () => {
    for (const asn of ['4242420001', 0, -1, 4294967296, 1.5, null, 'AS4242420001']) {
      const res = await f.client.post(PATH, { asn, captcha_token: 'x' });
      expectResponse(res).status(422).body({ error: 'invalid_request', fatal: false });
      expect(res.body.detail, `asn ${JSON.stringify(asn)}`).to.be.an('array').that.is.not.empty;
      expect(res.body.detail[0].loc).to.deep.equal(['body', 'asn']);
    }
    const missing = await f.client.post(PATH, {});
    expectResponse(missing).status(422);
    expect(missing.body.detail[0].loc).to.deep.equal(['body', 'asn']);
    const notJson = await f.client.post(PATH, '{"asn":', { headers: { 'content-type': 'application/json' } });
    expectResponse(notJson).status(422).body({ error: 'invalid_request', fatal: false });
    expect(notJson.body.detail).to.be.an('array');
  });

  it('accepts the edges of the ASN range (404 when unknown, not 422)', async () => {
    for (const asn of [1, 4294967295]) {
      expectResponse(await f.client.post(PATH, { asn, captcha_token: 'x' }))
        .status(404)
        .body({ error: 'not_found', fatal: false });
    }
  });

  it('answers 404 for an ASN the registry does not know, without spending the captcha ticket', async () => {
    const ticket = await powTicket(f.client);
    expectResponse(await f.client.post(PATH, { asn: 4242429999, captcha_token: ticket }))
      .status(404)
      .header('cache-control', 'no-store')
      .body({ detail: 'AS4242429999 not found in the registry', error: 'not_found', fatal: false });
    expectResponse(await f.client.post(PATH, { asn: GAMMA_ASN, captcha_token: ticket })).status(200);
  });

  it('refuses a missing, forged or replayed ticket with the fixed 400 text', async () => {
    const ticket = await powTicket(f.client);
    expectResponse(await f.client.post(PATH, { asn: GAMMA_ASN, captcha_token: ticket }, from('192.0.2.10'))).status(200);
    for (const body of [{ asn: GAMMA_ASN }, { asn: GAMMA_ASN, captcha_token: 'forged' }, { asn: GAMMA_ASN, captcha_token: ticket }]) {
      expectResponse(await f.client.post(PATH, body, from('192.0.2.10')))
        .status(400)
        .body({ detail: CAPTCHA_FAILED, error: 'captcha_failed', fatal: false });
    }
  });

  it('takes the ticket under its legacy alias cf-turnstile-response as equal', async () => {
    const ticket = await powTicket(f.client);
    expectResponse(await f.client.post(PATH, { asn: GAMMA_ASN, 'cf-turnstile-response': ticket })).status(200);
    expectResponse(await f.client.post(PATH, { asn: GAMMA_ASN, 'cf-turnstile-response': ticket }))
      .status(400)
      .detail(CAPTCHA_FAILED);
  });

  it('answers 429 to an address after 5 failed captchas in 15 minutes, others unaffected, and forgets them after the window', async () => {
    const ip = '203.0.113.7';
    for (let i = 0; i < 5; i++) {
      expectResponse(await f.client.post(PATH, { asn: GAMMA_ASN, captcha_token: `bad-${i}` }, from(ip)))
        .status(400)
        .detail(CAPTCHA_FAILED);
      f.sys.clock.advance(60_000);
    }
    // The 5 failures span 00:00..04:00; the block holds while all of them are inside the window.
    const blocked = await f.client.post(PATH, { asn: GAMMA_ASN, captcha_token: await powTicket(f.client) }, from(ip));
    expectResponse(blocked).status(429).header('cache-control', 'no-store').body({ error: 'rate_limited', fatal: false });
    expectResponse(await f.client.post(PATH, { asn: 4242429999, captcha_token: 'x' }, from(ip))).status(429);
    expectResponse(await f.client.post(PATH, { asn: GAMMA_ASN, captcha_token: await powTicket(f.client) }, from('203.0.113.8'))).status(200);
    f.sys.clock.advance(10 * 60_000 - 1000); // 15 minutes after the first failure, less a second
    expectResponse(await f.client.post(PATH, { asn: GAMMA_ASN, captcha_token: await powTicket(f.client) }, from(ip))).status(429);
    f.sys.clock.advance(1000); // the first failure leaves the window: 4 remain
    expectResponse(await f.client.post(PATH, { asn: GAMMA_ASN, captcha_token: await powTicket(f.client) }, from(ip))).status(200);
  });

  it('lets no more than 5 of 12 concurrent bad tickets of one address through to 400; successes do not count', async () => {
    const ip = '203.0.113.21';
    for (let i = 0; i < 3; i++) expectResponse(await f.client.post(PATH, { asn: GAMMA_ASN, captcha_token: await powTicket(f.client) }, from(ip))).status(200);
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => f.client.post(PATH, { asn: GAMMA_ASN, captcha_token: `burst-${i}` }, from(ip))));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).to.deep.equal([...Array(5).fill(400), ...Array(7).fill(429)]);
  });

  it('keeps its captcha-failure count apart from other pools', async () => {
    const { rateLimit } = await import('../../../infra/rate-limit.js');
    const other = rateLimit(f.sys.pool, { pool: 'passkey-login-spec', limit: 1, windowSeconds: 900 });
    await other.record('198.51.100.77', f.sys.clock.now());
    await other.record('198.51.100.77', f.sys.clock.now());
    expectResponse(await f.client.post(PATH, { asn: GAMMA_ASN, captcha_token: await powTicket(f.client) }, from('198.51.100.77'))).status(200);
  });

  it('answers 503 when the registry replica does not answer', async () => {
    await f.stopRegistry();
    expectResponse(await f.client.post(PATH, { asn: GAMMA_ASN, captcha_token: await powTicket(f.client) }))
      .status(503)
      .body({ error: 'temporarily_unavailable', fatal: false });
  });
});
