import type { ApiResult } from './api.js';
import { classifyContext, type AuthorizeContext } from './context.js';
import { problemOf, type Problem } from './problem.js';
import type { Ceremony, Challenge, SessionGrant, VerificationOption, VerificationOptions } from './types.js';

/**
 * The authorization page as a pure state machine: `update(model, msg)` returns
 * the next model and at most one effect (an API step) for the runner in
 * `app.ts` to perform; the effect's answer comes back as a `done` message. Time
 * comes in with the message, so every transition is testable without a browser.
 */

export type Screen =
  | { name: 'loading' }
  | { name: 'fatal'; detail: string }
  | { name: 'asn' }
  | { name: 'passkey'; ceremony?: Ceremony }
  | { name: 'methods' }
  | { name: 'answer'; option: VerificationOption; challenge: Challenge; needsPublicKey: boolean }
  | { name: 'enrol' }
  | { name: 'consent' }
  /** Leaving for an address the backend gave; `detail` explains an error hand-back. */
  | { name: 'leaving'; to: string; detail?: string };

export type Effect =
  | { kind: 'context' }
  | { kind: 'passkeyBegin'; asn: number }
  /** Begin (when no ceremony is at hand), browser assertion, finish. */
  | { kind: 'passkeyLogin'; asn: number; ceremony?: Ceremony }
  | { kind: 'options'; asn: number }
  | { kind: 'challenge'; asn: number; optionId: string; captcha: boolean; pass?: string }
  | { kind: 'submit'; challengeId: string; answer: string; publicKey?: string }
  /** Begin, browser creation, finish, with the session token. */
  | { kind: 'enrol'; token: string; label?: string }
  | { kind: 'approve'; token: string; params: Record<string, unknown>; deny: boolean }
  | { kind: 'navigate'; to: string };

export type Msg =
  | { type: 'start'; passkeys: boolean }
  | { type: 'retry' }
  | { type: 'asnEntered'; text: string }
  | { type: 'changeAsn' }
  | { type: 'usePasskey' }
  | { type: 'useOtherMethod' }
  | { type: 'optionChosen'; optionId: string; at: number }
  | { type: 'otherMethod' }
  | { type: 'answerSubmitted'; answer: string; publicKey?: string }
  | { type: 'resend'; at: number }
  | { type: 'enrol'; label?: string }
  | { type: 'skipEnrol' }
  | { type: 'decide'; deny: boolean }
  | { type: 'done'; effect: Effect; result: ApiResult; at: number }
  /** The browser's part of a passkey ceremony failed or was cancelled; nothing reached the service's finish. */
  | { type: 'ceremonyFailed'; effect: Effect; detail: string };

export interface Model {
  screen: Screen;
  /** The browser offers WebAuthn (and the page runs in a secure context). */
  passkeys: boolean;
  context?: AuthorizeContext;
  asn?: number;
  /** The AS number as typed, shown again after a refusal. */
  asnText?: string;
  options?: VerificationOptions;
  /** The `captcha_pass` of the last solve: re-sends skip the captcha while it lives. */
  pass?: { value: string; expiresAt: number };
  grant?: SessionGrant;
  /** What the running step does; controls are disabled meanwhile. */
  busy?: string;
  error?: Problem;
  /** The step to run again when the error is retryable. */
  retry?: Effect;
  notice?: string;
  /** What the user typed into the answer form, kept across a wrong answer. */
  draft?: { answer: string; publicKey?: string };
}

export const INVALID_ASN = 'Enter an AS number from 1 to 4294967295, for example 4242420000 or AS4242420000.';
export const PASSKEY_SAVED = 'Passkey saved. Next time you can log in with it.';
const MAX_ASN = 4294967295;

export function initialModel(): Model {
  return { screen: { name: 'loading' }, passkeys: false };
}

/** `AS4242420000`, `as4242420000` or `4242420000`; anything else, or out of range, is undefined. */
export function parseAsn(text: string): number | undefined {
  const m = /^\s*(?:AS)?(\d{1,10})\s*$/i.exec(text);
  if (!m) return undefined;
  const asn = Number(m[1]);
  return asn >= 1 && asn <= MAX_ASN ? asn : undefined;
}

type Step = [Model, Effect?];

export function update(model: Model, msg: Msg): Step {
  switch (msg.type) {
    case 'start':
      return run({ ...initialModel(), passkeys: msg.passkeys }, { kind: 'context' });
    case 'retry':
      return model.retry ? run(model, model.retry) : [model];
    case 'asnEntered': {
      const asn = parseAsn(msg.text);
      if (asn === undefined) return [{ ...calm(model), asnText: msg.text, screen: { name: 'asn' }, error: localProblem(INVALID_ASN) }];
      const next: Model = { ...calm(model), asn, asnText: msg.text, options: undefined, screen: { name: 'asn' } };
      return run(next, model.passkeys ? { kind: 'passkeyBegin', asn } : { kind: 'options', asn });
    }
    case 'changeAsn':
      return [{ ...calm(model), screen: { name: 'asn' }, options: undefined, draft: undefined }];
    case 'usePasskey':
      if (model.screen.name !== 'passkey' || model.asn === undefined) return [model];
      return run(model, { kind: 'passkeyLogin', asn: model.asn, ceremony: model.screen.ceremony });
    case 'useOtherMethod':
      return model.asn === undefined ? [model] : run(model, { kind: 'options', asn: model.asn });
    case 'optionChosen':
      return chooseOption(model, msg.optionId, msg.at);
    case 'otherMethod':
      return [{ ...calm(model), screen: { name: 'methods' }, draft: undefined }];
    case 'answerSubmitted': {
      if (model.screen.name !== 'answer') return [model];
      const draft = { answer: msg.answer, publicKey: msg.publicKey };
      if (msg.answer.trim() === '') return [{ ...calm(model), draft, error: localProblem(emptyAnswer(model.screen.challenge.method)) }];
      const publicKey = msg.publicKey?.trim() ? msg.publicKey : undefined;
      // A code may be pasted with spaces around or inside it; signatures go as pasted.
      const answer = model.screen.challenge.method === 'email' ? msg.answer.replace(/\s+/g, '') : msg.answer;
      return run({ ...model, draft }, { kind: 'submit', challengeId: model.screen.challenge.challenge_id, answer, ...(publicKey ? { publicKey } : {}) });
    }
    case 'resend':
      return model.screen.name === 'answer' ? chooseOption(model, model.screen.option.id, msg.at) : [model];
    case 'enrol':
      return model.grant ? run(model, { kind: 'enrol', token: model.grant.token, ...(msg.label?.trim() ? { label: msg.label.trim() } : {}) }) : [model];
    case 'skipEnrol':
      return [{ ...calm(model), screen: { name: 'consent' } }];
    case 'decide':
      if (!model.grant || !model.context) return [model];
      return run(model, { kind: 'approve', token: model.grant.token, params: model.context.params, deny: msg.deny });
    case 'done':
      return settle({ ...calm(model), busy: undefined }, msg.effect, msg.result, msg.at);
    case 'ceremonyFailed':
      return ceremonyFailed(model, msg.effect, msg.detail);
    default: {
      const _never: never = msg;
      return _never;
    }
  }
}

/** Starts an effect: busy with its label, any earlier error cleared. */
function run(model: Model, effect: Effect): Step {
  return [{ ...model, busy: busyLabel(model, effect), error: undefined, retry: undefined, notice: effect.kind === 'navigate' ? model.notice : undefined }, effect];
}

/** The model without a pending error or notice. */
function calm(model: Model): Model {
  return { ...model, error: undefined, retry: undefined, notice: undefined };
}

function localProblem(detail: string): Problem {
  return { status: 0, detail, fatal: false, retryable: false };
}

function emptyAnswer(method: Challenge['method']): string {
  if (method === 'email') return 'Enter the 6-digit code from the e-mail.';
  return method === 'ssh' ? 'Paste the SSH signature (the block starting with -----BEGIN SSH SIGNATURE-----).' : 'Paste the clearsigned message (the block starting with -----BEGIN PGP SIGNED MESSAGE-----).';
}

function chooseOption(model: Model, optionId: string, now: number): Step {
  const option = model.options?.options.find((o) => o.id === optionId);
  if (!option || model.asn === undefined) return [model];
  const pass = model.pass && model.pass.expiresAt > now ? model.pass.value : undefined;
  return run(model, { kind: 'challenge', asn: model.asn, optionId, captcha: option.captcha_required && pass === undefined, ...(option.captcha_required && pass ? { pass } : {}) });
}

function busyLabel(model: Model, effect: Effect): string {
  const kind = model.context?.captcha.kind;
  const puzzle = kind === 'pow' ? ' (solving a small anti-abuse puzzle)' : kind === 'external' ? ' (complete the captcha below)' : '';
  switch (effect.kind) {
    case 'context':
      return 'Loading the authorization request…';
    case 'passkeyBegin':
      return `Looking up AS${effect.asn}…`;
    case 'passkeyLogin':
      return 'Waiting for your passkey…';
    case 'options':
      return `Fetching the verification methods of AS${effect.asn}${puzzle}…`;
    case 'challenge':
      return `Preparing the challenge${effect.captcha ? puzzle : ''}…`;
    case 'submit':
      return 'Checking your answer…';
    case 'enrol':
      return 'Waiting for your passkey…';
    case 'approve':
      return effect.deny ? 'Declining…' : 'Authorizing…';
    case 'navigate':
      return 'Returning to the application…';
    default: {
      const _never: never = effect;
      return _never;
    }
  }
}

/** The answer of an effect. A failure stays on the current screen unless the step says otherwise. */
function settle(model: Model, effect: Effect, result: ApiResult, at: number): Step {
  switch (effect.kind) {
    case 'context':
      return settleContext(model, result);
    case 'passkeyBegin':
      if (result.status === 200) return [{ ...model, screen: { name: 'passkey', ceremony: result.body as Ceremony } }];
      // Contract: a 404 is the normal branch and falls back silently; so does any other refusal (the passkey is a shortcut only).
      if (result.status !== 0) return run(model, { kind: 'options', asn: effect.asn });
      return failed(model, effect, result);
    case 'passkeyLogin':
      if (result.status === 200) return granted(model, result.body as SessionGrant);
      if (result.status === 404 && effect.ceremony === undefined) return run(model, { kind: 'options', asn: effect.asn });
      return failed({ ...model, screen: { name: 'passkey' } }, { ...effect, ceremony: undefined }, result);
    case 'options':
      if (result.status === 200) return [{ ...model, options: result.body as VerificationOptions, screen: { name: 'methods' } }];
      return failed({ ...model, screen: { name: 'asn' } }, effect, result);
    case 'challenge':
      return settleChallenge(model, effect, result, at);
    case 'submit':
      return settleSubmit(model, effect, result);
    case 'enrol':
      if (result.status === 201) return [{ ...model, screen: { name: 'consent' }, notice: PASSKEY_SAVED }];
      return failed(model, effect, result);
    case 'approve':
      return settleApprove(model, effect, result);
    case 'navigate':
      return [model];
    default: {
      const _never: never = effect;
      return _never;
    }
  }
}

function settleContext(model: Model, result: ApiResult): Step {
  const outcome = classifyContext(result);
  switch (outcome.kind) {
    case 'valid':
      return [{ ...model, context: outcome.context, screen: { name: 'asn' } }];
    case 'redirect':
      return run({ ...model, screen: { name: 'leaving', to: outcome.redirectTo, detail: outcome.detail } }, { kind: 'navigate', to: outcome.redirectTo });
    case 'fatal':
      return [{ ...model, screen: { name: 'fatal', detail: outcome.problem.detail } }];
    case 'failed':
      return failed(model, { kind: 'context' }, result);
    default: {
      const _never: never = outcome;
      return _never;
    }
  }
}

function settleChallenge(model: Model, effect: Extract<Effect, { kind: 'challenge' }>, result: ApiResult, at: number): Step {
  const body = result.body as Partial<Challenge> | null;
  // A pass also comes with a 503 whose mail was not sent: the retry then needs no new captcha.
  const pass = typeof body?.captcha_pass === 'string' ? { value: body.captcha_pass, expiresAt: at + (body.captcha_pass_expires_in ?? 0) * 1000 } : model.pass;
  const problem = problemOf(result);
  // A refused pass is dropped, so the next try solves a fresh captcha.
  const kept = { ...model, pass: problem.error === 'captcha_failed' && effect.pass ? undefined : pass };
  if (result.status === 201) {
    const option = model.options!.options.find((o) => o.id === effect.optionId)!;
    const challenge = body as Challenge;
    // A re-send within the cooldown returns the same challenge: keep what was typed and whether a key was asked for.
    const same = model.screen.name === 'answer' && model.screen.challenge.challenge_id === challenge.challenge_id ? model.screen : undefined;
    return [{ ...kept, draft: same ? model.draft : undefined, screen: { name: 'answer', option, challenge, needsPublicKey: same?.needsPublicKey ?? false } }];
  }
  const retry = problem.error === 'captcha_failed' ? { ...effect, captcha: true, pass: undefined } : effect;
  return failed(kept, retry, result);
}

function settleSubmit(model: Model, effect: Extract<Effect, { kind: 'submit' }>, result: ApiResult): Step {
  if (result.status === 200) return granted(model, result.body as SessionGrant);
  // Gone, terminal or failed after the fifth wrong answer: a new challenge is needed, so back to the methods.
  if ([404, 409, 410, 429].includes(result.status)) return failed({ ...model, screen: { name: 'methods' }, draft: undefined }, effect, result);
  if (result.status === 422 && model.screen.name === 'answer' && model.screen.challenge.method === 'pgp') {
    return failed({ ...model, screen: { ...model.screen, needsPublicKey: true } }, effect, result);
  }
  return failed(model, effect, result);
}

function settleApprove(model: Model, effect: Extract<Effect, { kind: 'approve' }>, result: ApiResult): Step {
  const to = (result.body as { redirect_to?: unknown } | null)?.redirect_to;
  if (result.status === 200 && typeof to === 'string') return run({ ...model, screen: { name: 'leaving', to } }, { kind: 'navigate', to });
  const problem = problemOf(result);
  if (problem.fatal) return [{ ...model, screen: { name: 'fatal', detail: problem.detail } }];
  // The session ran out (2 hours) or was refused: verify again.
  if (result.status === 401) return [{ ...model, grant: undefined, screen: { name: 'asn' }, error: problem }];
  return failed(model, effect, result);
}

/** A session: enrolment first when the service offers it and the browser can, else consent. */
function granted(model: Model, grant: SessionGrant): Step {
  const enrol = grant.passkey_enrollment_available === true && model.passkeys;
  return [{ ...model, grant, draft: undefined, screen: { name: enrol ? 'enrol' : 'consent' } }];
}

function failed(model: Model, effect: Effect, result: ApiResult): Step {
  const problem = problemOf(result);
  return [{ ...model, error: problem, retry: problem.retryable ? effect : undefined }];
}

function ceremonyFailed(model: Model, effect: Effect, detail: string): Step {
  const problem = localProblem(detail);
  if (effect.kind === 'passkeyLogin') return [{ ...calm(model), busy: undefined, screen: { name: 'passkey' }, error: problem }];
  return [{ ...calm(model), busy: undefined, error: problem }];
}

/**
 * The body of `approve`: the `params` object of authorize-context as it came
 * (never rebuilt from the query) plus `deny`.
 */
export function approveBody(params: Record<string, unknown>, deny: boolean): Record<string, unknown> {
  return { ...params, deny };
}
