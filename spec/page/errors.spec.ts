import { expect } from 'chai';
import { CHALLENGE_EXPIRED, CHALLENGE_NOT_FOUND, TERMINAL_DETAIL, TOO_MANY_ATTEMPTS, tooManyChallenges } from '../../domain/identity/decide.js';
import { CEREMONY_EXPIRED, CEREMONY_NOT_FOUND } from '../../domain/identity/passkeys-ceremony.js';
import { PASSKEY_ALREADY_REGISTERED } from '../../domain/identity/passkeys-decide.js';
import { NO_MAIL_SENDER, OPTION_NOT_FOUND, WRONG_ANSWER } from '../../commands/identity/challenges.js';
import { AUTHORIZATION_LAPSED, NO_MAINTAINER, NO_PASSKEY, VERIFICATION_FAILED } from '../../commands/identity/passkeys.js';
import { TOO_MANY_CAPTCHA_FAILURES, unknownAsn } from '../../commands/identity/verification.js';
import { CAPTCHA_FAILED } from '../../http/identity/errors.js';
import { TOO_MANY_PASSKEY_LOGINS } from '../../http/identity/passkeys.js';
import { PGP_KEY_NOT_FOUND, PGP_UNAVAILABLE } from '../../infra/identity/pgp.js';
import { update, type Effect, type Model } from '../../web/authorize/flow.js';
import { NETWORK_FAILURE } from '../../web/authorize/problem.js';
import { answer, GRANT, onAnswer, onMethods } from './flow-support.js';

const ASN = 4242420010;
const CODE: Record<number, string> = {
  400: 'invalid_request',
  401: 'invalid_token',
  403: 'access_denied',
  404: 'not_found',
  409: 'conflict',
  410: 'expired',
  422: 'invalid_request',
  429: 'rate_limited',
  503: 'temporarily_unavailable',
};

/** One refusal of the contract's Errors table: its status, the service's own detail text, and where the page must leave the user. */
interface Refusal {
  status: number;
  detail: string;
  error?: string;
  /** The screen after the answer. */
  screen: Model['screen']['name'];
  /** A "Try again" that repeats the step is offered. */
  retry: boolean;
}

/**
 * Feeds `refusal` as the answer of `effect` started from `from` and checks what
 * the page shows: the service's detail word for word, the screen, the retry, and
 * that nothing else is started (no redirect, no silent call).
 */
function expectShown(from: Model, effect: Effect, refusal: Refusal): Model {
  const body = { detail: refusal.detail, error: refusal.error ?? CODE[refusal.status], fatal: false };
  const [model, next] = update(from, answer(effect, refusal.status, body));
  const what = `${effect.kind} ${refusal.status}`;
  expect(next, what).to.equal(undefined);
  expect(model.screen.name, what).to.equal(refusal.screen);
  expect(model.error?.detail, what).to.equal(refusal.detail);
  expect(model.busy, what).to.equal(undefined);
  expect(model.retry, what).to.deep.equal(refusal.retry ? effect : undefined);
  return model;
}

describe('Authorization page: every refusal of the verification endpoints is shown with its detail', () => {
  const onAsn = (): Model => ({ ...onMethods(), screen: { name: 'asn' }, options: undefined });
  const offering = (): Model => ({ ...onMethods(), screen: { name: 'passkey', ceremony: { ceremony_id: 'c-1', options: {} } } });
  const enrolling = (): Model => ({ ...onMethods(), grant: { ...GRANT, method: 'ssh', passkey_enrollment_available: true }, screen: { name: 'enrol' } });

  describe('verification-options', () => {
    const effect: Effect = { kind: 'options', asn: ASN };
    const refusals: Refusal[] = [
      { status: 400, detail: CAPTCHA_FAILED, error: 'captcha_failed', screen: 'asn', retry: false },
      { status: 404, detail: unknownAsn(ASN), screen: 'asn', retry: false },
      { status: 422, detail: 'asn: must be <= 4294967295', screen: 'asn', retry: false },
      { status: 429, detail: TOO_MANY_CAPTCHA_FAILURES, screen: 'asn', retry: false },
      { status: 503, detail: 'registry unavailable', screen: 'asn', retry: true },
    ];
    for (const refusal of refusals) {
      it(`${refusal.status}: back on the AS number with "${refusal.detail}"${refusal.retry ? ' and a retry' : ''}`, () => {
        expectShown(onAsn(), effect, refusal);
      });
    }
  });

  describe('challenge', () => {
    const effect: Effect = { kind: 'challenge', asn: ASN, optionId: 'email-1', captcha: true };
    const refusals: Refusal[] = [
      { status: 400, detail: CAPTCHA_FAILED, error: 'captcha_failed', screen: 'methods', retry: false },
      { status: 404, detail: OPTION_NOT_FOUND, screen: 'methods', retry: false },
      { status: 429, detail: tooManyChallenges(ASN), screen: 'methods', retry: false },
      { status: 503, detail: NO_MAIL_SENDER, screen: 'methods', retry: true },
    ];
    for (const refusal of refusals) {
      it(`${refusal.status}: stays on the methods with "${refusal.detail}"`, () => {
        expectShown(onMethods(), effect, refusal);
      });
    }
  });

  describe('challenge/submit', () => {
    const submitted = (method: 'ssh' | 'pgp'): [Model, Effect] => update(onAnswer(method), { type: 'answerSubmitted', answer: 'pasted' }) as [Model, Effect];
    const again: Refusal[] = [
      { status: 404, detail: CHALLENGE_NOT_FOUND, screen: 'methods', retry: false },
      { status: 409, detail: TERMINAL_DETAIL.Superseded, screen: 'methods', retry: false },
      { status: 409, detail: TERMINAL_DETAIL.Succeeded, screen: 'methods', retry: false },
      { status: 410, detail: CHALLENGE_EXPIRED, screen: 'methods', retry: false },
      { status: 429, detail: TOO_MANY_ATTEMPTS, screen: 'methods', retry: false },
    ];
    for (const refusal of again) {
      it(`${refusal.status}: a new challenge is needed, so back to the methods with "${refusal.detail}"`, () => {
        const [from, effect] = submitted('ssh');
        const model = expectShown(from, effect, refusal);
        expect(model.draft, 'the answer of a dead challenge is not kept').to.equal(undefined);
      });
    }

    it(`400: stays on the answer with "${WRONG_ANSWER}", what was pasted kept`, () => {
      const [from, effect] = submitted('ssh');
      expect(expectShown(from, effect, { status: 400, detail: WRONG_ANSWER, error: 'wrong_answer', screen: 'answer', retry: false }).draft?.answer).to.equal(
        'pasted',
      );
    });

    it('422 of a PGP answer: stays on the answer and opens the public key field', () => {
      const [from, effect] = submitted('pgp');
      expect(expectShown(from, effect, { status: 422, detail: PGP_KEY_NOT_FOUND, screen: 'answer', retry: false }).screen).to.include({ needsPublicKey: true });
    });

    it(`503: stays on the answer with "${PGP_UNAVAILABLE}" and a retry of the same submit`, () => {
      const [from, effect] = submitted('pgp');
      expectShown(from, effect, { status: 503, detail: PGP_UNAVAILABLE, screen: 'answer', retry: true });
    });

    it('0: the network failure on the answer, with a retry', () => {
      const [from, effect] = submitted('ssh');
      const [model] = update(from, answer(effect, 0));
      expect(model.error?.detail).to.equal(NETWORK_FAILURE);
      expect(model.retry).to.deep.equal(effect);
      expect(model.draft?.answer).to.equal('pasted');
    });
  });

  describe('passkey login', () => {
    for (const status of [404, 429, 503]) {
      it(`login/begin ${status}: falls back to the options without showing anything`, () => {
        const [model, next] = update(
          onAsn(),
          answer({ kind: 'passkeyBegin', asn: ASN }, status, { detail: status === 404 ? NO_PASSKEY : 'x', error: CODE[status], fatal: false }),
        );
        expect(next).to.deep.equal({ kind: 'options', asn: ASN });
        expect(model.error).to.equal(undefined);
      });
    }

    const refusals: Refusal[] = [
      { status: 400, detail: VERIFICATION_FAILED, screen: 'passkey', retry: false },
      { status: 403, detail: AUTHORIZATION_LAPSED, screen: 'passkey', retry: false },
      { status: 404, detail: CEREMONY_NOT_FOUND, screen: 'passkey', retry: false },
      { status: 410, detail: CEREMONY_EXPIRED, screen: 'passkey', retry: false },
      { status: 429, detail: TOO_MANY_PASSKEY_LOGINS, screen: 'passkey', retry: false },
    ];
    for (const refusal of refusals) {
      it(`login/finish ${refusal.status}: stays on the passkey offer with "${refusal.detail}"`, () => {
        const [from, effect] = update(offering(), { type: 'usePasskey' });
        expectShown(from, effect!, refusal);
      });
    }
  });

  describe('passkey enrolment', () => {
    const refusals: Refusal[] = [
      { status: 400, detail: NO_MAINTAINER, screen: 'enrol', retry: false },
      { status: 400, detail: VERIFICATION_FAILED, screen: 'enrol', retry: false },
      { status: 404, detail: CEREMONY_NOT_FOUND, screen: 'enrol', retry: false },
      { status: 409, detail: PASSKEY_ALREADY_REGISTERED, screen: 'enrol', retry: false },
      { status: 410, detail: CEREMONY_EXPIRED, screen: 'enrol', retry: false },
    ];
    for (const refusal of refusals) {
      it(`register ${refusal.status}: stays on the offer with "${refusal.detail}", and "Not now" still leads to consent`, () => {
        const [from, effect] = update(enrolling(), { type: 'enrol' });
        const model = expectShown(from, effect!, refusal);
        expect(update(model, { type: 'skipEnrol' })[0].screen.name).to.equal('consent');
      });
    }
  });
});
