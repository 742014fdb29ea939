import type { ApiResult } from './api.js';
import type { Effect, Model, Step } from './model.js';
import { problemOf, type Problem } from './problem.js';
import type { SessionGrant } from './types.js';

/** Transitions shared by `update` and `settle`: start a step, fail one, receive a session. */

/** Starts an effect: busy with its label, any earlier error cleared. */
export function run(model: Model, effect: Effect): Step {
  return [
    { ...model, busy: busyLabel(model, effect), error: undefined, retry: undefined, notice: effect.kind === 'navigate' ? model.notice : undefined },
    effect,
  ];
}

/** The model without a pending error or notice. */
export function calm(model: Model): Model {
  return { ...model, error: undefined, retry: undefined, notice: undefined };
}

export function localProblem(detail: string): Problem {
  return { status: 0, detail, fatal: false, retryable: false };
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

/** A session: enrolment first when the service offers it and the browser can, else consent. */
export function granted(model: Model, grant: SessionGrant): Step {
  const enrol = grant.passkey_enrollment_available === true && model.passkeys;
  return [{ ...model, grant, draft: undefined, screen: { name: enrol ? 'enrol' : 'consent' } }];
}

export function failed(model: Model, effect: Effect, result: ApiResult): Step {
  const problem = problemOf(result);
  return [{ ...model, error: problem, retry: problem.retryable ? effect : undefined }];
}

export function ceremonyFailed(model: Model, effect: Effect, detail: string): Step {
  const problem = localProblem(detail);
  if (effect.kind === 'passkeyLogin') return [{ ...calm(model), busy: undefined, screen: { name: 'passkey' }, error: problem }];
  return [{ ...calm(model), busy: undefined, error: problem }];
}
