import { expect } from 'chai';
import {
  approveBody,
  INSECURE_CONTEXT,
  INVALID_ASN,
  PASSKEY_SAVED,
  initialModel,
  parseAsn,
  update,
  type Effect,
  type Model,
} from '../../web/authorize/flow.js';
import { NETWORK_FAILURE } from '../../web/authorize/problem.js';
import { after, answer, challengeOf, CONTEXT, GRANT, onAnswer, onMethods, PARAMS } from './flow-support.js';

describe('Authorization page flow', () => {
  describe('loading the request', () => {
    it('asks for the context first and shows the AS number entry for a valid request, params untouched', () => {
      const [loading, effect] = update(initialModel(), { type: 'start', secure: true, passkeys: true });
      expect(loading.screen.name).to.equal('loading');
      expect(effect).to.deep.equal({ kind: 'context' });
      const [model, none] = update(loading, answer(effect!, 200, CONTEXT));
      expect(model.screen.name).to.equal('asn');
      expect(model.context!.params).to.equal(PARAMS);
      expect(none).to.equal(undefined);
    });

    it('sends a faulty but verified request back to the redirect_to of the backend, with its detail shown meanwhile', () => {
      const to = 'http://127.0.0.1:9/cb?error=invalid_scope&state=st-1';
      const [model, effect] = after(
        initialModel(),
        { type: 'start', secure: true, passkeys: false },
        answer({ kind: 'context' }, 200, { redirect_to: to, error: 'invalid_scope', detail: 'scope must contain openid' }),
      );
      expect(model.screen).to.deep.equal({ name: 'leaving', to, detail: 'scope must contain openid' });
      expect(effect).to.deep.equal({ kind: 'navigate', to });
    });

    it('shows the fatal screen for an invalid client or redirect_uri and never navigates', () => {
      const [model, effect] = after(
        initialModel(),
        { type: 'start', secure: true, passkeys: false },
        answer({ kind: 'context' }, 400, { error: 'invalid_redirect_uri', detail: 'redirect_uri is not registered for this client', fatal: true }),
      );
      expect(model.screen).to.deep.equal({ name: 'fatal', detail: 'redirect_uri is not registered for this client' });
      expect(effect).to.equal(undefined);
      expect(update(model, { type: 'retry' })[1], 'nothing to retry').to.equal(undefined);
    });

    it('outside a secure context shows the terminal screen and asks the service nothing', () => {
      const [model, effect] = update(initialModel(), { type: 'start', secure: false, passkeys: false });
      expect(effect).to.equal(undefined);
      expect(model.screen).to.include({ name: 'fatal', detail: INSECURE_CONTEXT });
      expect(update(model, { type: 'retry' })[1]).to.equal(undefined);
    });

    it('treats a network failure as status 0 with a retry that asks again', () => {
      const [model, effect] = after(initialModel(), { type: 'start', secure: true, passkeys: false }, answer({ kind: 'context' }, 0));
      expect(effect).to.equal(undefined);
      expect(model.error).to.include({ status: 0, detail: NETWORK_FAILURE, retryable: true });
      const [retrying, again] = update(model, { type: 'retry' });
      expect(again).to.deep.equal({ kind: 'context' });
      expect(retrying.error).to.equal(undefined);
      expect(retrying.busy).to.be.a('string');
    });
  });

  describe('AS number and passkey login', () => {
    it('accepts AS4242420010, as4242420010 and a bare number; refuses syntax errors and numbers outside 1..4294967295', () => {
      expect([parseAsn('AS4242420010'), parseAsn(' as4242420010 '), parseAsn('4294967295')]).to.deep.equal([4242420010, 4242420010, 4294967295]);
      expect([parseAsn('0'), parseAsn('4294967296'), parseAsn('AS-1'), parseAsn('42 42'), parseAsn('')]).to.deep.equal([
        undefined,
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
      const [model, effect] = update({ ...initialModel(), screen: { name: 'asn' } }, { type: 'asnEntered', text: 'AS0' });
      expect(effect).to.equal(undefined);
      expect(model.error?.detail).to.equal(INVALID_ASN);
      expect(model.asnText, 'what was typed stays in the field').to.equal('AS0');
    });

    it('tries passkey login first only for an AS this browser used a passkey for (no 404 to log otherwise), else goes straight to the options', () => {
      const base = { ...initialModel(), screen: { name: 'asn' } as const };
      const known = { ...base, passkeys: true, passkeyAsns: [4242420010] };
      expect(update(known, { type: 'asnEntered', text: '4242420010' })[1]).to.deep.equal({ kind: 'passkeyBegin', asn: 4242420010 });
      expect(update(known, { type: 'asnEntered', text: '4242420011' })[1]).to.deep.equal({ kind: 'options', asn: 4242420011 });
      expect(update({ ...base, passkeys: true }, { type: 'asnEntered', text: '4242420010' })[1]).to.deep.equal({ kind: 'options', asn: 4242420010 });
      expect(update({ ...known, passkeys: false }, { type: 'asnEntered', text: '4242420010' })[1]).to.deep.equal({ kind: 'options', asn: 4242420010 });
      // The runner starts the page with the list it kept.
      const [started] = update(initialModel(), { type: 'start', secure: true, passkeys: true, passkeyAsns: [4242420010] });
      expect(started.passkeyAsns).to.deep.equal([4242420010]);
    });

    it('"Use a passkey" on the methods screen asks login/begin; a 404 then says so and stays on the methods, anything else offers the passkey', () => {
      const methods = onMethods();
      expect(methods.passkeyAsns).to.deep.equal([]);
      const [asking, begin] = update(methods, { type: 'tryPasskey' });
      expect(begin).to.deep.equal({ kind: 'passkeyBegin', asn: 4242420010, asked: true });
      const [none, next] = update(asking, answer(begin!, 404, { detail: 'no passkey', error: 'not_found', fatal: false }));
      expect(next).to.equal(undefined);
      expect(none.screen.name).to.equal('methods');
      expect(none.error).to.equal(undefined);
      expect(none.notice).to.equal('No passkey is registered for AS4242420010. Choose another way below.');
      const ceremony = { ceremony_id: 'c-1', options: {} };
      expect(update(asking, answer(begin!, 200, ceremony))[0].screen).to.deep.equal({ name: 'passkey', ceremony });
      // Without WebAuthn there is nothing to ask.
      expect(update(onMethods(false), { type: 'tryPasskey' })[1]).to.equal(undefined);
    });

    it('remembers the AS once a passkey logged in to it or was saved for it, and forgets it when login/begin finds none', () => {
      const offer: Model = { ...initialModel(), passkeys: true, asn: 4242420010, screen: { name: 'passkey', ceremony: { ceremony_id: 'c-1', options: {} } } };
      const [, login] = update(offer, { type: 'usePasskey' });
      const [loggedIn] = update(offer, answer(login!, 200, { ...GRANT, method: 'passkey' }));
      expect(loggedIn.passkeyAsns).to.deep.equal([4242420010]);

      const enrolling: Model = { ...onMethods(), grant: { ...GRANT, method: 'ssh', passkey_enrollment_available: true }, screen: { name: 'enrol' } };
      const [, enrol] = update(enrolling, { type: 'enrol' });
      expect(update(enrolling, answer(enrol!, 201, {}))[0].passkeyAsns).to.deep.equal([GRANT.asn]);

      const known: Model = { ...initialModel(), passkeys: true, passkeyAsns: [4242420010, 4242420011], asn: 4242420010, screen: { name: 'asn' } };
      const [forgot, options] = update(
        known,
        answer({ kind: 'passkeyBegin', asn: 4242420010 }, 404, { detail: 'no passkey', error: 'not_found', fatal: false }),
      );
      expect(options).to.deep.equal({ kind: 'options', asn: 4242420010 });
      expect(forgot.passkeyAsns).to.deep.equal([4242420011]);
    });

    it('falls back silently to the options when login/begin answers 404', () => {
      const [model, effect] = update(
        { ...initialModel(), passkeys: true, asn: 4242420010, screen: { name: 'asn' } },
        answer({ kind: 'passkeyBegin', asn: 4242420010 }, 404, { detail: 'no passkey', error: 'not_found', fatal: false }),
      );
      expect(effect).to.deep.equal({ kind: 'options', asn: 4242420010 });
      expect(model.error).to.equal(undefined);
    });

    it('offers the passkey after a 200 of login/begin and logs in with that ceremony; a session goes to consent without enrolment', () => {
      const ceremony = { ceremony_id: 'c-1', options: { challenge: 'abc' } };
      const [offer] = update(
        { ...initialModel(), passkeys: true, asn: 4242420010, screen: { name: 'asn' } },
        answer({ kind: 'passkeyBegin', asn: 4242420010 }, 200, ceremony),
      );
      expect(offer.screen).to.deep.equal({ name: 'passkey', ceremony });
      const [, login] = update(offer, { type: 'usePasskey' });
      expect(login).to.deep.equal({ kind: 'passkeyLogin', asn: 4242420010, ceremony });
      const [model] = update(offer, answer(login!, 200, { ...GRANT, method: 'passkey' }));
      expect(model.screen.name).to.equal('consent');
      expect(model.grant?.token).to.equal('session-jwt');
    });

    it('shows a refused login/finish on the offer (a used ceremony too, 404) and the next try begins anew; a refused begin of that try falls back silently', () => {
      const offer: Model = { ...initialModel(), passkeys: true, asn: 4242420010, screen: { name: 'passkey', ceremony: { ceremony_id: 'c-1', options: {} } } };
      const [, login] = update(offer, { type: 'usePasskey' });
      const [used] = update(offer, answer(login!, 404, { detail: 'ceremony not found', error: 'not_found', fatal: false }));
      expect(used.screen).to.deep.equal({ name: 'passkey' });
      expect(used.error?.detail).to.equal('ceremony not found');
      const [again, next] = update(used, { type: 'usePasskey' });
      expect(next).to.deep.equal({ kind: 'passkeyLogin', asn: 4242420010, ceremony: undefined });
      // The runner reports the begin of that try as the begin: its 404 is the normal branch.
      const [model, options] = update(
        again,
        answer({ kind: 'passkeyBegin', asn: 4242420010 }, 404, { detail: 'no passkey for this ASN', error: 'not_found', fatal: false }),
      );
      expect(options).to.deep.equal({ kind: 'options', asn: 4242420010 });
      expect(model.error).to.equal(undefined);
    });

    it('after a cancelled passkey prompt stays on the offer with the reason, and the next try begins a new ceremony', () => {
      const offer: Model = { ...initialModel(), passkeys: true, asn: 4242420010, screen: { name: 'passkey', ceremony: { ceremony_id: 'c-1', options: {} } } };
      const [model] = update(offer, { type: 'ceremonyFailed', effect: { kind: 'passkeyLogin', asn: 4242420010 }, detail: 'The passkey prompt was closed' });
      expect(model.screen).to.deep.equal({ name: 'passkey' });
      expect(model.error?.detail).to.equal('The passkey prompt was closed');
      expect(update(model, { type: 'usePasskey' })[1]).to.deep.equal({ kind: 'passkeyLogin', asn: 4242420010, ceremony: undefined });
    });
  });

  describe('verification', () => {
    it('shows the options, and a refused captcha on them goes back to the AS number with the contract text', () => {
      expect(onMethods().screen.name).to.equal('methods');
      const [model, effect] = update(
        { ...onMethods(), screen: { name: 'asn' } },
        answer({ kind: 'options', asn: 4242420010 }, 400, { detail: 'captcha verification failed', error: 'captcha_failed', fatal: false }),
      );
      expect(effect).to.equal(undefined);
      expect(model.screen.name).to.equal('asn');
      expect(model.error).to.include({ detail: 'captcha verification failed', retryable: false });
    });

    it('asks a captcha only for an option that requires one, and re-sends with the pass while it lives', () => {
      expect(update(onMethods(), { type: 'optionChosen', optionId: 'ssh-1', at: 0 })[1]).to.deep.equal({
        kind: 'challenge',
        asn: 4242420010,
        optionId: 'ssh-1',
        captcha: false,
      });
      const [asking, effect] = update(onMethods(), { type: 'optionChosen', optionId: 'email-1', at: 0 });
      expect(effect).to.deep.equal({ kind: 'challenge', asn: 4242420010, optionId: 'email-1', captcha: true });
      const [model] = update(asking, answer(effect!, 201, challengeOf('email', { captcha_pass: 'pass-1', captcha_pass_expires_in: 1800 }), 10_000));
      expect(model.screen.name).to.equal('answer');
      expect(model.pass).to.deep.equal({ value: 'pass-1', expiresAt: 10_000 + 1_800_000 });
      expect(update(model, { type: 'resend', at: 20_000 })[1]).to.deep.equal({
        kind: 'challenge',
        asn: 4242420010,
        optionId: 'email-1',
        captcha: false,
        pass: 'pass-1',
      });
      expect(update(model, { type: 'resend', at: 10_000 + 1_800_000 })[1], 'an expired pass is not sent').to.deep.equal({
        kind: 'challenge',
        asn: 4242420010,
        optionId: 'email-1',
        captcha: true,
      });
    });

    it('counts the re-send cooldown from when the challenge arrived', () => {
      const [asking, effect] = update(onMethods(), { type: 'optionChosen', optionId: 'email-1', at: 0 });
      const [model] = update(asking, answer(effect!, 201, challengeOf('email', { resend_available_in: 42 }), 5_000));
      expect(model.screen).to.include({ name: 'answer', resendAt: 5_000 + 42_000 });
    });

    it('drops a pass the service refused, so the retry solves a fresh captcha', () => {
      const withPass: Model = { ...onAnswer('email'), pass: { value: 'pass-1', expiresAt: Number.MAX_SAFE_INTEGER } };
      const [, resend] = update(withPass, { type: 'resend', at: 0 });
      const [model] = update(withPass, answer(resend!, 400, { detail: 'captcha verification failed', error: 'captcha_failed', fatal: false }));
      expect(model.pass).to.equal(undefined);
      expect(model.error?.detail).to.equal('captcha verification failed');
    });

    it('submits a code without the spaces it was pasted with, and a signature as pasted', () => {
      const [, email] = update(onAnswer('email'), { type: 'answerSubmitted', answer: ' 123 456 ' });
      expect(email).to.deep.equal({ kind: 'submit', challengeId: 'email-challenge', answer: '123456' });
      const signature = '-----BEGIN SSH SIGNATURE-----\nAAA\n-----END SSH SIGNATURE-----\n';
      expect(update(onAnswer('ssh'), { type: 'answerSubmitted', answer: signature })[1]).to.deep.equal({
        kind: 'submit',
        challengeId: 'ssh-challenge',
        answer: signature,
      });
      const [empty, none] = update(onAnswer('ssh'), { type: 'answerSubmitted', answer: '  ' });
      expect(none).to.equal(undefined);
      expect(empty.error?.detail).to.match(/BEGIN SSH SIGNATURE/);
    });

    it('keeps a wrong answer in the field with the detail; a failed, terminal or expired challenge goes back to the methods', () => {
      const [submitted, effect] = update(onAnswer('ssh'), { type: 'answerSubmitted', answer: 'bad' });
      const [wrong] = update(
        submitted,
        answer(effect!, 400, { detail: 'the signature does not verify over the challenge nonce', error: 'wrong_answer', fatal: false }),
      );
      expect(wrong.screen.name).to.equal('answer');
      expect(wrong.draft?.answer).to.equal('bad');
      expect(wrong.error?.detail).to.equal('the signature does not verify over the challenge nonce');
      for (const status of [409, 410, 429]) {
        const [model] = update(submitted, answer(effect!, status, { detail: `gone ${status}`, error: 'x', fatal: false }));
        expect(model.screen.name, String(status)).to.equal('methods');
        expect(model.error?.detail).to.equal(`gone ${status}`);
      }
    });

    it('asks for the public key when the PGP key was found nowhere (422)', () => {
      const [submitted, effect] = update(onAnswer('pgp'), { type: 'answerSubmitted', answer: 'signed' });
      const [model] = update(submitted, answer(effect!, 422, { detail: 'the key was found nowhere; paste it', error: 'invalid_request', fatal: false }));
      expect(model.screen).to.include({ name: 'answer', needsPublicKey: true });
      const [, again] = update(model, { type: 'answerSubmitted', answer: 'signed', publicKey: 'KEY' });
      expect(again).to.deep.equal({ kind: 'submit', challengeId: 'pgp-challenge', answer: 'signed', publicKey: 'KEY' });
    });

    it('offers passkey enrolment after a submit only when the service says so and the browser can', () => {
      const granted = (passkeys: boolean, available: boolean | undefined) => {
        const [submitted, effect] = update(onAnswer('ssh', passkeys), { type: 'answerSubmitted', answer: 'sig' });
        return update(submitted, answer(effect!, 200, { ...GRANT, ...(available === undefined ? {} : { passkey_enrollment_available: available }) }))[0].screen
          .name;
      };
      expect([granted(true, true), granted(true, false), granted(true, undefined), granted(false, true)]).to.deep.equal([
        'enrol',
        'consent',
        'consent',
        'consent',
      ]);
    });
  });

  describe('enrolment and consent', () => {
    const enrolling = (): Model => ({ ...onMethods(), grant: { ...GRANT, method: 'ssh', passkey_enrollment_available: true }, screen: { name: 'enrol' } });

    it('enrols with the session token and a trimmed label, then consents with a notice; skipping goes to consent', () => {
      const [, effect] = update(enrolling(), { type: 'enrol', label: '  laptop  ' });
      expect(effect).to.deep.equal({ kind: 'enrol', token: 'session-jwt', label: 'laptop' });
      const [model] = update(enrolling(), answer(effect!, 201, { credential_id: 'c' }));
      expect(model.screen.name).to.equal('consent');
      expect(model.notice).to.equal(PASSKEY_SAVED);
      expect(update(enrolling(), { type: 'skipEnrol' })[0].screen.name).to.equal('consent');
    });

    it('approves or denies with the params object as it came plus deny, and leaves only for the redirect_to of the answer', () => {
      const consent: Model = { ...onMethods(), grant: { ...GRANT, method: 'ssh' }, screen: { name: 'consent' } };
      const [, approve] = update(consent, { type: 'decide', deny: false });
      expect(approve).to.deep.equal({ kind: 'approve', token: 'session-jwt', params: PARAMS, deny: false });
      expect((approve as Extract<Effect, { kind: 'approve' }>).params).to.equal(PARAMS);
      expect(update(consent, { type: 'decide', deny: true })[1]).to.include({ deny: true });
      const to = 'http://127.0.0.1:9/cb?code=c0de&state=st-1';
      const [leaving, navigate] = update(consent, answer(approve!, 200, { redirect_to: to }));
      expect(leaving.screen).to.deep.equal({ name: 'leaving', to });
      expect(navigate).to.deep.equal({ kind: 'navigate', to });
    });

    it('shows a fatal approve as the terminal screen, sends an expired session back to the AS number, and retries a 503', () => {
      const consent: Model = { ...onMethods(), grant: { ...GRANT, method: 'ssh' }, screen: { name: 'consent' } };
      const [, approve] = update(consent, { type: 'decide', deny: false });
      const [fatal, none] = update(consent, answer(approve!, 400, { detail: 'unknown client_id', error: 'invalid_client', fatal: true }));
      expect(fatal.screen).to.deep.equal({ name: 'fatal', detail: 'unknown client_id' });
      expect(none).to.equal(undefined);
      const [expired] = update(consent, answer(approve!, 401, { detail: 'invalid or expired session token', error: 'invalid_token', fatal: false }));
      expect(expired.screen.name).to.equal('asn');
      expect(expired.grant).to.equal(undefined);
      const [unavailable] = update(consent, answer(approve!, 503, { detail: 'registry unavailable', error: 'temporarily_unavailable', fatal: false }));
      expect(unavailable.retry).to.deep.equal(approve);
    });

    it('builds the approve body from the params and deny only', () => {
      expect(approveBody(PARAMS, true)).to.deep.equal({ ...PARAMS, deny: true });
    });
  });
});
