import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { decodeJwt } from 'jose';
import { createIdentityApp } from '../../../http/identity/app.js';
import { api, expectResponse } from '../../support/http.js';
import { startApp } from '../../support/system.js';
import { SoftAuthenticator } from '../../support/passkey-authenticator.js';
import { GAMMA_ASN, GAMMA_EMAIL, optionId, powTicket, startVerification, type VerificationFixture } from './verification-support.js';

const CHALLENGE = '/api/v1/challenge';
const SUBMIT = '/api/v1/challenge/submit';

describe('Identity POST /challenge/submit', function () {
  this.timeout(90_000);
  let f: VerificationFixture;
  let options: Record<'email' | 'ssh' | 'pgp', string>;

  before(async () => {
    f = await startVerification();
    options = {
      email: await optionId(f.client, GAMMA_ASN, 'email'),
      ssh: await optionId(f.client, GAMMA_ASN, 'ssh'),
      pgp: await optionId(f.client, GAMMA_ASN, 'pgp'),
    };
  });
  after(() => f?.done());

  /** A new challenge for the option: past the cooldown, so never a reused one. */
  async function issue(kind: 'email' | 'ssh' | 'pgp'): Promise<{ challenge_id: string; nonce?: string; code?: string }> {
    f.sys.clock.advance(61_000);
    const res = await f.client.post(CHALLENGE, {
      asn: GAMMA_ASN,
      option_id: options[kind],
      ...(kind === 'email' ? { captcha_token: await powTicket(f.client) } : {}),
    });
    expectResponse(res).status(201).body({ reused: false });
    return { ...res.body, ...(kind === 'email' ? { code: f.smtp.codeFor(GAMMA_EMAIL) } : {}) };
  }

  const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

  it('answers 404 for a challenge that does not exist', async () => {
    for (const challenge_id of [randomUUID(), 'not-a-challenge', '../asn-4242420010']) {
      expectResponse(await f.client.post(SUBMIT, { challenge_id, answer: '123456' }))
        .status(404)
        .body({ detail: 'challenge not found', error: 'not_found', fatal: false });
    }
  });

  it('answers 422 with a detail array for a bad body', async () => {
    for (const body of [
      { answer: '123456' },
      { challenge_id: randomUUID() },
      { challenge_id: randomUUID(), answer: '' },
      { challenge_id: 1, answer: '123456' },
    ]) {
      const res = await f.client.post(SUBMIT, body);
      expectResponse(res).status(422).body({ error: 'invalid_request' });
      expect(res.body.detail).to.be.an('array');
    }
  });

  it('grants a session for the e-mail code read from the mail, offers passkey enrollment, and answers 409 to a second use', async () => {
    const c = await issue('email');
    const res = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: c.code });
    expectResponse(res)
      .status(200)
      .header('cache-control', 'no-store')
      .body({ asn: GAMMA_ASN, mntner: 'GAMMA-MNT', method: 'email', passkey_enrollment_available: true });
    expect(res.body).to.have.all.keys('token', 'asn', 'mntner', 'method', 'expires_at', 'passkey_enrollment_available');
    expect(decodeJwt(res.body.token)).to.include({ asn: GAMMA_ASN, mnt: 'GAMMA-MNT', method: 'email' });
    const session = await f.client.get('/api/v1/session', { token: res.body.token });
    expectResponse(session).status(200).body({ asn: GAMMA_ASN, mntner: 'GAMMA-MNT', method: 'email' });
    expectResponse(await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: c.code }))
      .status(409)
      .body({ detail: 'challenge already used', error: 'conflict' });
  });

  it('stops offering passkey enrollment once the maintainer has a passkey', async () => {
    f.sys.clock.advance(3_600_000); // a fresh hour: the per-ASN challenge limit must not interfere
    const first = await issue('ssh');
    const grant = await f.client.post(SUBMIT, { challenge_id: first.challenge_id, answer: f.ssh.sign(first.nonce!) });
    expectResponse(grant).status(200).body({ passkey_enrollment_available: true });
    const begin = await f.client.post('/api/v1/passkeys/register/begin', undefined, { token: grant.body.token });
    expectResponse(begin).status(200);
    const credential = new SoftAuthenticator(f.issuer).create(begin.body.options);
    const finish = await f.client.post('/api/v1/passkeys/register/finish', { ceremony_id: begin.body.ceremony_id, credential }, { token: grant.body.token });
    expectResponse(finish).status(201);
    const second = await issue('ssh');
    const again = await f.client.post(SUBMIT, { challenge_id: second.challenge_id, answer: f.ssh.sign(second.nonce!) });
    expectResponse(again).status(200).body({ mntner: 'GAMMA-MNT', passkey_enrollment_available: false });
    // Removing the only passkey offers enrollment again.
    expectResponse(await f.client.delete(`/api/v1/passkeys/${finish.body.credential_id}`, { token: again.body.token })).status(204);
    const third = await issue('ssh');
    const offered = await f.client.post(SUBMIT, { challenge_id: third.challenge_id, answer: f.ssh.sign(third.nonce!) });
    expectResponse(offered).status(200).body({ passkey_enrollment_available: true });
    f.sys.clock.advance(3_600_000);
  });

  it('counts wrong codes: 400 four times, 429 on the fifth (challenge failed), then 409 even for the right code', async () => {
    const c = await issue('email');
    for (let i = 1; i <= 4; i++) {
      expectResponse(await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: i === 2 ? 'abcdef' : wrongCode(c.code!) }))
        .status(400)
        .body({ detail: 'wrong answer', error: 'wrong_answer', fatal: false });
    }
    expectResponse(await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: wrongCode(c.code!) }))
      .status(429)
      .body({ detail: 'too many wrong answers; request a new challenge', error: 'rate_limited', fatal: false });
    expectResponse(await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: c.code }))
      .status(409)
      .detail('challenge failed; request a new one');
    const types = (await f.sys.store.readStream(`challenge-${c.challenge_id}`)).map((e) => e.type);
    expect(types).to.deep.equal(['ChallengeIssued', ...Array(5).fill('ChallengeAnswerRejected'), 'ChallengeFailed']);
  });

  it('lets exactly one of two racing correct answers through', async () => {
    const c = await issue('email');
    const results = await Promise.all([0, 1, 2].map(() => f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: c.code })));
    expect(results.map((r) => r.status).sort()).to.deep.equal([200, 409, 409]);
  });

  it('answers 410 once the 15 minutes are over, and still accepts the answer a moment before', async () => {
    const late = await issue('email');
    f.sys.clock.advance(15 * 60_000);
    expectResponse(await f.client.post(SUBMIT, { challenge_id: late.challenge_id, answer: late.code }))
      .status(410)
      .body({ detail: 'challenge expired', error: 'expired', fatal: false });
    const inTime = await issue('email');
    f.sys.clock.advance(15 * 60_000 - 1);
    expectResponse(await f.client.post(SUBMIT, { challenge_id: inTime.challenge_id, answer: inTime.code })).status(200);
  });

  describe('ssh', () => {
    it('grants a session for an ssh-keygen signature of the nonce made with the registered key', async () => {
      const c = await issue('ssh');
      expect(c.nonce).to.match(/^AS4242420010-/);
      const res = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: f.ssh.sign(c.nonce!) });
      expectResponse(res).status(200).body({ asn: GAMMA_ASN, mntner: 'GAMMA-MNT', method: 'ssh', passkey_enrollment_available: true });
    });

    it('refuses a wrong namespace and a signature over another nonce as wrong answers that count', async () => {
      const c = await issue('ssh');
      const wrongNamespace = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: f.ssh.sign(c.nonce!, 'file') });
      expectResponse(wrongNamespace).status(400).body({ error: 'wrong_answer' });
      expect(wrongNamespace.body.detail).to.match(/^wrong answer: .*namespace/);
      const tampered = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: f.ssh.sign(`${c.nonce}x`) });
      expectResponse(tampered).status(400).body({ error: 'wrong_answer' });
      const rejected = (await f.sys.store.readStream(`challenge-${c.challenge_id}`)).filter((e) => e.type === 'ChallengeAnswerRejected');
      expect(rejected.map((e) => (e.data as { reason: string }).reason)).to.deep.equal(['namespace', 'bad-signature']);
    });
    it('issues nothing when the session cannot be signed: 500, and the challenge can still be answered', async () => {
      f.sys.clock.advance(3_600_000);
      expectResponse(await f.client.get('/.well-known/jwks.json')).status(200); // the signing key exists, sealed with the fixture's secret
      const c = await issue('ssh');
      const answer = f.ssh.sign(c.nonce!);
      const wrongSecret = await startApp(
        createIdentityApp({ ...f.sys.context, config: { ...f.sys.config, identityKeySecret: 'another secret that cannot open the keys' } }),
      );
      try {
        expectResponse(await api(wrongSecret.url).post(SUBMIT, { challenge_id: c.challenge_id, answer }))
          .status(500)
          .body({ error: 'server_error' });
      } finally {
        await wrongSecret.close();
      }
      expect((await f.sys.store.readStream(`challenge-${c.challenge_id}`)).map((e) => e.type)).to.deep.equal(['ChallengeIssued']);
      const res = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer });
      expectResponse(res).status(200).body({ mntner: 'GAMMA-MNT', method: 'ssh' });
      const jti = decodeJwt(res.body.token).jti!;
      expect((await f.sys.store.readStream(`session-${jti}`)).map((e) => e.type)).to.deep.equal(['SessionIssued']);
    });
  });

  describe('pgp', () => {
    it('asks for the key (422, not an attempt) when no source has it, then grants a session with the key from the request', async () => {
      const c = await issue('pgp');
      const signed = f.gpg.clearsign(f.pgpFingerprint, c.nonce!);
      const missing = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: signed });
      expectResponse(missing).status(422).body({ error: 'invalid_request', fatal: false });
      expect(missing.body.detail).to.be.a('string');
      const res = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: signed, public_key: f.gpg.exportPublic(f.pgpFingerprint) });
      expectResponse(res).status(200).body({ asn: GAMMA_ASN, mntner: 'GAMMA-MNT', method: 'pgp' });
      const types = (await f.sys.store.readStream(`challenge-${c.challenge_id}`)).map((e) => e.type);
      expect(types).to.deep.equal(['ChallengeIssued', 'ChallengeSucceeded']);
    });

    it('refuses a clearsigned text that is not the nonce (replay) as a wrong answer', async () => {
      const c = await issue('pgp');
      const res = await f.client.post(SUBMIT, {
        challenge_id: c.challenge_id,
        answer: f.gpg.clearsign(f.pgpFingerprint, 'AS4242420010-an-old-nonce'),
        public_key: f.gpg.exportPublic(f.pgpFingerprint),
      });
      expectResponse(res).status(400).body({ error: 'wrong_answer' });
    });
  });
});
