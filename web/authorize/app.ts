import { call, PATHS, type ApiResult } from './api.js';
import { captchaSource, type CaptchaSource } from './captcha.js';
import { approveBody, initialModel, update, type Effect, type Model, type Msg } from './flow.js';
import { ceremonyProblem, createCredential, getAssertion, passkeysAvailable, storedPasskeyAsns, storePasskeyAsns } from './passkey.js';
import type { Ceremony, VerificationOptions } from './types.js';
import { ERROR_ID, HEADING_ID } from './view-parts.js';
import { screenOf } from './view.js';

/**
 * The runner: holds the model, renders it, moves focus, and performs the one
 * effect each transition may ask for. Everything it decides lives in `flow.ts`.
 */

const screenRoot = document.getElementById('screen')!;
const statusLine = document.getElementById('status')!;
const fetchFn = (input: string, init: RequestInit) => fetch(input, init);
let model: Model = initialModel();
let captcha: CaptchaSource | undefined;
/** The id of the control the user was on, kept across the busy render that disables it. */
let focusMemory: string | undefined;

function dispatch(msg: Msg): void {
  const previous = model;
  const [next, effect] = update(model, msg);
  model = next;
  if (model.passkeyAsns !== previous.passkeyAsns) storePasskeyAsns(model.passkeyAsns);
  render(previous);
  if (model.context && !captcha) {
    captcha = captchaSource(model.context.captcha, { fetch: fetchFn, widgetSlot: () => document.getElementById('captcha')!, loadScript });
    // The first ticket is needed as soon as the AS number is in: solve it while the user types.
    captcha.prepare();
  }
  if (effect) void perform(effect).then((m) => m && dispatch(m));
}

function render(previous: Model): void {
  const focused = document.activeElement;
  if (focused?.id && screenRoot.contains(focused)) focusMemory = focused.id;
  screenRoot.replaceChildren(screenOf(model, dispatch));
  statusLine.textContent = model.busy ?? model.notice ?? '';
  statusLine.classList.toggle('busy', !!model.busy);
  focusAfterRender(previous, focusMemory);
}

/** A new error takes focus (WCAG 3.3.1); a new screen focuses its error, else its first field, else its heading; otherwise focus stays where it was. */
function focusAfterRender(previous: Model, focusedId: string | undefined): void {
  const byId = (id: string | undefined) => (id ? (document.getElementById(id) as HTMLElement | null) : null);
  if (model.error && model.error !== previous.error) return byId(ERROR_ID)?.focus();
  if (screenKey(model) !== screenKey(previous)) {
    focusMemory = undefined;
    // `data-focus` marks a screen's first field; `autofocus` would act once per document only.
    const first = screenRoot.querySelector<HTMLElement>('[data-focus]:not([disabled])');
    return (byId(ERROR_ID) ?? first ?? byId(HEADING_ID))?.focus();
  }
  const again = byId(focusedId);
  if (again && !(again as HTMLButtonElement).disabled) again.focus();
}

function screenKey(m: Model): string {
  return m.screen.name === 'answer' ? `answer:${m.screen.challenge.challenge_id}` : m.screen.name;
}

const done = (effect: Effect, result: ApiResult): Msg => ({ type: 'done', effect, result, at: Date.now() });

async function perform(effect: Effect): Promise<Msg | undefined> {
  switch (effect.kind) {
    case 'context':
      // The query string goes on unchanged (contract): the backend alone reads and verifies it.
      return done(effect, await call(fetchFn, 'GET', PATHS.context + location.search));
    case 'passkeyBegin':
      return done(effect, await call(fetchFn, 'POST', PATHS.passkeyLoginBegin, { body: { asn: effect.asn } }));
    case 'passkeyLogin':
      return passkeyLogin(effect);
    case 'options':
      return options(effect);
    case 'challenge':
      return challenge(effect);
    case 'submit':
      return done(
        effect,
        await call(fetchFn, 'POST', PATHS.submit, {
          body: { challenge_id: effect.challengeId, answer: effect.answer, ...(effect.publicKey ? { public_key: effect.publicKey } : {}) },
        }),
      );
    case 'enrol':
      return enrol(effect);
    case 'approve':
      return done(effect, await call(fetchFn, 'POST', PATHS.approve, { token: effect.token, body: approveBody(effect.params, effect.deny) }));
    case 'navigate':
      // Only addresses the backend returned reach this point (authorize-context's redirect_to or approve's).
      // `replace`, like the redirect of a server-side authorization endpoint: Back from the application does not return to a finished consent.
      location.replace(effect.to);
      return undefined;
    default: {
      const _never: never = effect;
      return _never;
    }
  }
}

/** `captcha_token` for a body, or the failure to show instead of calling. */
async function ticketField(): Promise<{ field: { captcha_token?: string } } | { failure: ApiResult }> {
  if (!captcha || model.context?.captcha.kind === 'none') return { field: {} };
  const outcome = await captcha.ticket();
  return 'ticket' in outcome ? { field: { captcha_token: outcome.ticket } } : outcome;
}

async function options(effect: Extract<Effect, { kind: 'options' }>): Promise<Msg> {
  const ticket = await ticketField();
  if ('failure' in ticket) return done(effect, ticket.failure);
  const result = await call(fetchFn, 'POST', PATHS.options, { body: { asn: effect.asn, ...ticket.field } });
  // Options that need a captcha will want a second ticket: solve it while the user reads the list.
  if (result.status === 200 && (result.body as VerificationOptions).options?.some((o) => o.captcha_required)) captcha?.prepare();
  return done(effect, result);
}

async function challenge(effect: Extract<Effect, { kind: 'challenge' }>): Promise<Msg> {
  const ticket = effect.captcha ? await ticketField() : { field: {} };
  if ('failure' in ticket) return done(effect, ticket.failure);
  const body = { asn: effect.asn, option_id: effect.optionId, ...ticket.field, ...(effect.pass ? { captcha_pass: effect.pass } : {}) };
  return done(effect, await call(fetchFn, 'POST', PATHS.challenge, { body }));
}

async function passkeyLogin(effect: Extract<Effect, { kind: 'passkeyLogin' }>): Promise<Msg> {
  let ceremony = effect.ceremony;
  if (!ceremony) {
    const begun = await call(fetchFn, 'POST', PATHS.passkeyLoginBegin, { body: { asn: effect.asn } });
    // A refused begin is the begin's answer (404 falls back silently), not a failed finish.
    if (begun.status !== 200) return done({ kind: 'passkeyBegin', asn: effect.asn }, begun);
    ceremony = begun.body as Ceremony;
  }
  let credential: unknown;
  try {
    credential = await getAssertion(ceremony.options);
  } catch (err) {
    return { type: 'ceremonyFailed', effect, detail: ceremonyProblem(err) };
  }
  return done(effect, await call(fetchFn, 'POST', PATHS.passkeyLoginFinish, { body: { ceremony_id: ceremony.ceremony_id, credential } }));
}

async function enrol(effect: Extract<Effect, { kind: 'enrol' }>): Promise<Msg> {
  const begun = await call(fetchFn, 'POST', PATHS.passkeyRegisterBegin, { token: effect.token });
  if (begun.status !== 200) return done(effect, begun);
  const ceremony = begun.body as Ceremony;
  let credential: unknown;
  try {
    credential = await createCredential(ceremony.options);
  } catch (err) {
    return { type: 'ceremonyFailed', effect, detail: ceremonyProblem(err) };
  }
  const body = { ceremony_id: ceremony.ceremony_id, credential, ...(effect.label ? { label: effect.label } : {}) };
  return done(effect, await call(fetchFn, 'POST', PATHS.passkeyRegisterFinish, { token: effect.token, body }));
}

function loadScript(src: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = src;
    script.async = true;
    script.onload = () => resolve();
    script.onerror = () => reject(new Error(`${src} did not load`));
    document.head.append(script);
  });
}

const passkeys = passkeysAvailable();
dispatch({ type: 'start', secure: globalThis.isSecureContext === true, passkeys, passkeyAsns: passkeys ? storedPasskeyAsns() : [] });
