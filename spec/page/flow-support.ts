import type { ApiResult } from '../../web/authorize/api.js';
import { initialModel, update, type Effect, type Model, type Msg } from '../../web/authorize/flow.js';
import type { Challenge, VerificationOptions } from '../../web/authorize/types.js';

/** Fixtures of the page's state-machine specs: an authorize-context, the options of AS4242420010, challenges, a grant. */

export const PARAMS = {
  client_id: 'app-1',
  redirect_uri: 'http://127.0.0.1:9/cb',
  response_type: 'code',
  scope: 'openid dn42',
  code_challenge: 'x'.repeat(43),
  code_challenge_method: 'S256',
  state: 'st-1',
};
export const CONTEXT = {
  client: { name: 'Peering Portal' },
  scopes: [{ id: 'openid', description: 'your identity' }],
  params: PARAMS,
  captcha: { kind: 'pow', endpoint: '/api/v1/captcha/challenge' },
};
export const OPTIONS: VerificationOptions = {
  asn: 4242420010,
  as_name: 'GAMMA-AS',
  display_name: 'AS4242420010 (GAMMA-AS)',
  mntners: ['GAMMA-MNT'],
  options: [
    { id: 'ssh-1', kind: 'ssh', method: 'ssh-ed25519', value: 'ssh-ed25519 AAAAC3Nz', comment: 'gamma@laptop', mntner: 'GAMMA-MNT', captcha_required: false },
    { id: 'email-1', kind: 'email', method: 'e-mail', value: 'g***@gamma.example', comment: 'Gina Gamma', mntner: 'GAMMA-MNT', captcha_required: true },
    { id: 'pgp-1', kind: 'pgp', method: 'pgp-fingerprint', value: 'ABCD'.repeat(10), comment: '', mntner: 'GAMMA-MNT', captcha_required: false },
  ],
};
export const challengeOf = (method: Challenge['method'], extra: Partial<Challenge> = {}): Challenge => ({
  challenge_id: `${method}-challenge`,
  method,
  ...(method === 'email' ? { sent_to: 'g***@gamma.example' } : { nonce: 'AS4242420010-abc' }),
  instructions: 'do it',
  expires_at: '2030-01-01T00:15:00Z',
  reused: false,
  resend_available_in: 60,
  ...extra,
});
export const GRANT = { token: 'session-jwt', asn: 4242420010, mntner: 'GAMMA-MNT', method: 'ssh', expires_at: '2030-01-01T02:00:00Z' };

/** Runs messages from a model; returns the last model and effect. */
export function after(model: Model, ...msgs: Msg[]): [Model, Effect | undefined] {
  let effect: Effect | undefined;
  for (const msg of msgs) [model, effect] = update(model, msg);
  return [model, effect];
}
export const answer = (effect: Effect, status: number, body: unknown = null, at = 1_000): Msg => ({
  type: 'done',
  effect,
  result: { status, body } as ApiResult,
  at,
});

/** A model on the methods screen of AS4242420010 (browser with passkeys unless told otherwise). */
export function onMethods(passkeys = true): Model {
  const [m1, e1] = update(initialModel(), { type: 'start', secure: true, passkeys });
  const [m2] = update(m1, answer(e1!, 200, CONTEXT));
  const [m3] = update(m2, { type: 'asnEntered', text: 'AS4242420010' });
  return update(m3, answer({ kind: 'options', asn: 4242420010 }, 200, OPTIONS))[0];
}

export function onAnswer(method: Challenge['method'], passkeys = true): Model {
  const id = OPTIONS.options.find((o) => o.kind === method)!.id;
  const [m, e] = update(onMethods(passkeys), { type: 'optionChosen', optionId: id, at: 0 });
  return update(m, answer(e!, 201, challengeOf(method)))[0];
}
