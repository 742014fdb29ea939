import type { ApiResult } from './api.js';
import { classifyContext } from './context.js';
import { noPasskeyFor, PASSKEY_SAVED, withPasskeyAsn, type Effect, type Model, type Step } from './model.js';
import { problemOf } from './problem.js';
import { failed, granted, run } from './steps.js';
import type { Ceremony, Challenge, SessionGrant, VerificationOptions } from './types.js';

/** The answer of an effect. A failure stays on the current screen unless the step says otherwise. */
export function settle(model: Model, effect: Effect, result: ApiResult, at: number): Step {
  switch (effect.kind) {
    case 'context':
      return settleContext(model, result);
    case 'passkeyBegin':
      // Also the answer of the begin a later passkey try starts (the runner reports it as this effect).
      if (result.status === 200) return [{ ...model, screen: { name: 'passkey', ceremony: result.body as Ceremony } }];
      // Asked for from the methods screen: say there is none and stay there.
      if (result.status === 404 && effect.asked)
        return [{ ...model, passkeyAsns: withPasskeyAsn(model.passkeyAsns, effect.asn, false), notice: noPasskeyFor(effect.asn) }];
      // Contract: a 404 is the normal branch and falls back silently (the passkey is gone: not asked again); so does any other refusal (the passkey is a shortcut only).
      if (result.status === 404)
        return run({ ...model, passkeyAsns: withPasskeyAsn(model.passkeyAsns, effect.asn, false) }, { kind: 'options', asn: effect.asn });
      if (result.status !== 0) return effect.asked ? failed(model, effect, result) : run(model, { kind: 'options', asn: effect.asn });
      return failed(model, effect, result);
    case 'passkeyLogin':
      // Only `login/finish` answers here: its 400, 403, 404 (ceremony used) and 410 are shown, and the next try begins anew.
      if (result.status === 200) return granted({ ...model, passkeyAsns: withPasskeyAsn(model.passkeyAsns, effect.asn, true) }, result.body as SessionGrant);
      return failed({ ...model, screen: { name: 'passkey' } }, { ...effect, ceremony: undefined }, result);
    case 'options':
      if (result.status === 200) return [{ ...model, options: result.body as VerificationOptions, screen: { name: 'methods' } }];
      return failed({ ...model, screen: { name: 'asn' } }, effect, result);
    case 'challenge':
      return settleChallenge(model, effect, result, at);
    case 'submit':
      return settleSubmit(model, effect, result);
    case 'enrol':
      if (result.status === 201)
        return [{ ...model, passkeyAsns: withPasskeyAsn(model.passkeyAsns, model.grant?.asn, true), screen: { name: 'consent' }, notice: PASSKEY_SAVED }];
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
    const resendAt = at + Math.max(0, challenge.resend_available_in ?? 0) * 1000;
    return [
      {
        ...kept,
        draft: same ? model.draft : undefined,
        screen: { name: 'answer', option, challenge, needsPublicKey: same?.needsPublicKey ?? false, resendAt },
      },
    ];
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
