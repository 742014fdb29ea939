import { INSECURE_CONTEXT, INSECURE_EXPLANATION, INVALID_ASN, initialModel, parseAsn, type Model, type Msg, type Step } from './model.js';
import { settle } from './settle.js';
import { calm, ceremonyFailed, localProblem, run } from './steps.js';
import type { Challenge } from './types.js';

export * from './model.js';

/**
 * The authorization page as a pure state machine: `update(model, msg)` returns
 * the next model and at most one effect (an API step) for the runner in
 * `app.ts` to perform; the effect's answer comes back as a `done` message and
 * is settled in `settle.ts`. Time comes in with the message, so every
 * transition is testable without a browser.
 */
export function update(model: Model, msg: Msg): Step {
  switch (msg.type) {
    case 'start':
      // Outside a secure context nothing is asked: a session token must not travel in clear.
      if (!msg.secure) return [{ ...initialModel(), screen: { name: 'fatal', detail: INSECURE_CONTEXT, explanation: INSECURE_EXPLANATION } }];
      return run({ ...initialModel(), passkeys: msg.passkeys, passkeyAsns: msg.passkeyAsns ?? [] }, { kind: 'context' });
    case 'retry':
      return model.retry ? run(model, model.retry) : [model];
    case 'asnEntered': {
      const asn = parseAsn(msg.text);
      if (asn === undefined) return [{ ...calm(model), asnText: msg.text, screen: { name: 'asn' }, error: localProblem(INVALID_ASN) }];
      const next: Model = { ...calm(model), asn, asnText: msg.text, options: undefined, screen: { name: 'asn' } };
      // Only for an AS this browser used a passkey for: any other would get the begin's 404, which the browser logs as an error.
      return run(next, model.passkeys && model.passkeyAsns.includes(asn) ? { kind: 'passkeyBegin', asn } : { kind: 'options', asn });
    }
    case 'changeAsn':
      return [{ ...calm(model), screen: { name: 'asn' }, options: undefined, draft: undefined }];
    case 'usePasskey':
      if (model.screen.name !== 'passkey' || model.asn === undefined) return [model];
      return run(model, { kind: 'passkeyLogin', asn: model.asn, ceremony: model.screen.ceremony });
    case 'tryPasskey':
      return model.asn === undefined || !model.passkeys ? [model] : run(model, { kind: 'passkeyBegin', asn: model.asn, asked: true });
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

function emptyAnswer(method: Challenge['method']): string {
  if (method === 'email') return 'Enter the 6-digit code from the e-mail.';
  return method === 'ssh'
    ? 'Paste the SSH signature (the block starting with -----BEGIN SSH SIGNATURE-----).'
    : 'Paste the clearsigned message (the block starting with -----BEGIN PGP SIGNED MESSAGE-----).';
}

function chooseOption(model: Model, optionId: string, now: number): Step {
  const option = model.options?.options.find((o) => o.id === optionId);
  if (!option || model.asn === undefined) return [model];
  const pass = model.pass && model.pass.expiresAt > now ? model.pass.value : undefined;
  return run(model, {
    kind: 'challenge',
    asn: model.asn,
    optionId,
    captcha: option.captcha_required && pass === undefined,
    ...(option.captcha_required && pass ? { pass } : {}),
  });
}
