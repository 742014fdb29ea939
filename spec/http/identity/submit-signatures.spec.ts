import { expect } from 'chai';
import { expectResponse } from '../../support/http.js';
import { fakeHardwareKey, SshKeyPair, TestKeyserver, type SshKeyKind } from '../../support/keys.js';
import { rpsl, spaced } from '../../support/registry.js';
import { optionsOf, startVerification, type VerificationFixture } from './verification-support.js';

const CHALLENGE = '/api/v1/challenge';
const SUBMIT = '/api/v1/challenge/submit';
const DELTA_ASN = 4242420020;

/**
 * Submit over HTTP with answers made by the real tools: ssh-keygen signatures of every
 * supported key type, an `sk-` key refused by name, and gpg clearsigned nonces whose key
 * the service finds in the registry key-cert or on the key server (the request's
 * `public_key` path is in submit.spec.ts).
 */
describe('Identity POST /challenge/submit with real signatures', function () {
  this.timeout(120_000);
  const keyserver = new TestKeyserver();
  const ssh = new Map<SshKeyKind, SshKeyPair>();
  const hardware = fakeHardwareKey();
  let stranger: SshKeyPair;
  let f: VerificationFixture;
  /** Registered through a `PGPKEY-` key-cert of the registry. */
  let certified: string;
  /** Registered by fingerprint only; the key server has the key. */
  let published: string;
  let options: { id: string; kind: string; value: string }[];

  before(async () => {
    await keyserver.start();
    f = await startVerification({ PGP_KEYSERVER_URL: keyserver.url });
    for (const kind of ['ecdsa-256', 'ecdsa-384', 'ecdsa-521', 'rsa'] as const) ssh.set(kind, SshKeyPair.generate(kind));
    stranger = SshKeyPair.generate('ed25519');
    certified = f.gpg.generate('Delta Certified <certified@delta.example>');
    published = f.gpg.generate('Delta Published <published@delta.example>');
    keyserver.keys.set(published, f.gpg.exportPublic(published));
    const keyCert = `PGPKEY-${certified.slice(-8)}`;
    f.repo
      .put(
        'aut-num',
        `AS${DELTA_ASN}`,
        rpsl([
          ['aut-num', `AS${DELTA_ASN}`],
          ['as-name', 'DELTA-AS'],
          ['mnt-by', 'DELTA-MNT'],
          ['source', 'DN42'],
        ]),
      )
      .put(
        'mntner',
        'DELTA-MNT',
        rpsl([
          ['mntner', 'DELTA-MNT'],
          ...[...ssh.values()].map((k) => ['auth', `${k.publicKey} ${k.type}@delta`] as const),
          ['auth', `${hardware.publicKey} yubikey`],
          ['auth', keyCert],
          ['auth', `pgp-fingerprint ${published}`],
          ['mnt-by', 'DELTA-MNT'],
          ['source', 'DN42'],
        ]),
      )
      .put(
        'key-cert',
        keyCert,
        rpsl([
          ['key-cert', keyCert],
          ['method', 'PGP'],
          ['owner', 'Delta Certified <certified@delta.example>'],
          ['fingerpr', spaced(certified)],
          ...f.gpg
            .exportPublic(certified)
            .trim()
            .split('\n')
            .map((line) => ['certif', line] as const),
          ['mnt-by', 'DELTA-MNT'],
          ['source', 'DN42'],
        ]),
      );
    await f.sync();
    options = await optionsOf(f.client, DELTA_ASN);
  });
  after(async () => {
    await f?.done();
    await keyserver.close();
    for (const k of ssh.values()) k.destroy();
    stranger?.destroy();
  });
  beforeEach(() => {
    keyserver.requests.length = 0;
  });

  /** A fresh challenge for the option whose value contains `value` (kept under 10 per ASN per hour). */
  async function issue(kind: 'ssh' | 'pgp', value: string): Promise<{ challenge_id: string; nonce: string }> {
    const option = options.find((o) => o.kind === kind && o.value.includes(value));
    if (!option) throw new Error(`AS${DELTA_ASN} has no ${kind} option for ${value}`);
    f.sys.clock.advance(61_000);
    const res = await f.client.post(CHALLENGE, { asn: DELTA_ASN, option_id: option.id });
    expectResponse(res).status(201).body({ reused: false });
    expect(res.body.nonce).to.match(new RegExp(`^AS${DELTA_ASN}-`));
    return res.body;
  }

  const rejections = async (challengeId: string) =>
    (await f.sys.store.readStream(`challenge-${challengeId}`))
      .filter((e) => e.type === 'ChallengeAnswerRejected')
      .map((e) => (e.data as { reason: string }).reason);

  describe('ssh', () => {
    for (const kind of ['ecdsa-256', 'ecdsa-384', 'ecdsa-521', 'rsa'] as const) {
      it(`grants a session for an ssh-keygen ${kind} signature of the nonce`, async () => {
        const key = ssh.get(kind)!;
        const c = await issue('ssh', key.publicKey.split(' ')[1]);
        const res = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: key.sign(c.nonce) });
        expectResponse(res).status(200).body({ asn: DELTA_ASN, mntner: 'DELTA-MNT', method: 'ssh' });
      });
    }

    it('refuses an sk- hardware key by name and a key the option does not register, each counting as an attempt', async () => {
      const sk = await issue('ssh', hardware.publicKey.split(' ')[1]);
      const refused = await f.client.post(SUBMIT, { challenge_id: sk.challenge_id, answer: hardware.sign(sk.nonce) });
      expectResponse(refused).status(400).body({ error: 'wrong_answer' });
      expect(refused.body.detail).to.match(/^wrong answer: hardware security keys \(sk-ssh-ed25519@openssh.com\)/);

      const rsa = ssh.get('rsa')!;
      const c = await issue('ssh', rsa.publicKey.split(' ')[1]);
      const unknown = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: stranger.sign(c.nonce) });
      expectResponse(unknown).status(400).body({ error: 'wrong_answer' });
      expect(unknown.body.detail).to.match(/not a key registered for this option/);
      const otherOption = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: ssh.get('ecdsa-256')!.sign(c.nonce) });
      expectResponse(otherOption).status(400).body({ error: 'wrong_answer' });

      expect(await rejections(sk.challenge_id)).to.deep.equal(['hardware-key']);
      expect(await rejections(c.challenge_id)).to.deep.equal(['unknown-key', 'unknown-key']);
    });
  });

  describe('pgp', () => {
    it('grants a session for a gpg clearsigned nonce whose key is in the registry key-cert, asking no key server', async () => {
      const c = await issue('pgp', certified);
      const res = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: f.gpg.clearsign(certified, c.nonce) });
      expectResponse(res).status(200).body({ asn: DELTA_ASN, mntner: 'DELTA-MNT', method: 'pgp' });
      expect(keyserver.requests).to.deep.equal([]);
    });

    it('grants a session for a gpg clearsigned nonce whose key only the key server has', async () => {
      const c = await issue('pgp', published);
      const res = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: f.gpg.clearsign(published, c.nonce) });
      expectResponse(res).status(200).body({ asn: DELTA_ASN, mntner: 'DELTA-MNT', method: 'pgp' });
      expect(keyserver.requests).to.deep.equal([`/pks/lookup?op=get&options=mr&search=0x${published}`]);
    });

    it('refuses a clearsign by the other registered key as a wrong answer', async () => {
      const c = await issue('pgp', published);
      const res = await f.client.post(SUBMIT, { challenge_id: c.challenge_id, answer: f.gpg.clearsign(certified, c.nonce) });
      expectResponse(res).status(400).body({ error: 'wrong_answer' });
      expect(res.body.detail).to.match(new RegExp(`not signed by key ${published}`));
      expect(await rejections(c.challenge_id)).to.deep.equal(['pgp']);
    });
  });
});
