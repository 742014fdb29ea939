import type { ApiResult } from './api.js';
import type { Problem } from './problem.js';
import type { AuthorizeContext, Ceremony, Challenge, SessionGrant, VerificationOption, VerificationOptions } from './types.js';

/** The page's state, its messages and the effects a transition may ask for (see `flow.ts`). */

export type Screen =
  | { name: 'loading' }
  /** Terminal: `explanation` replaces the default advice (the request was refused). */
  | { name: 'fatal'; detail: string; explanation?: string }
  | { name: 'asn' }
  | { name: 'passkey'; ceremony?: Ceremony }
  | { name: 'methods' }
  /** `resendAt`: when (browser clock, ms) the service's re-send cooldown of this challenge ends. */
  | { name: 'answer'; option: VerificationOption; challenge: Challenge; needsPublicKey: boolean; resendAt: number }
  | { name: 'enrol' }
  | { name: 'consent' }
  /** Leaving for an address the backend gave; `detail` explains an error hand-back. */
  | { name: 'leaving'; to: string; detail?: string };

export type Effect =
  | { kind: 'context' }
  /** `asked`: the user asked for a passkey from the methods screen (a 404 is then told, not skipped). */
  | { kind: 'passkeyBegin'; asn: number; asked?: boolean }
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
  /** `secure`: the page runs in a secure context (HTTPS or localhost); `passkeys`: the browser can run the ceremonies. */
  | { type: 'start'; secure: boolean; passkeys: boolean; passkeyAsns?: readonly number[] }
  | { type: 'retry' }
  | { type: 'asnEntered'; text: string }
  | { type: 'changeAsn' }
  | { type: 'usePasskey' }
  /** "Use a passkey" on the methods screen: for an AS this browser has no passkey on record for. */
  | { type: 'tryPasskey' }
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
  /**
   * AS numbers this browser logged in to with a passkey or saved one for (kept in
   * local storage by the runner). `login/begin` is asked on its own only for these:
   * its 404 for any other AS is the contract's normal branch, but the browser logs
   * it in the console as a failed request. Any other AS can still ask from the
   * methods screen ("Use a passkey").
   */
  passkeyAsns: readonly number[];
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
/** The answer to "Use a passkey" when the service knows none for the AS (login/begin 404). */
export const noPasskeyFor = (asn: number): string => `No passkey is registered for AS${asn}. Choose another way below.`;

/** `list` with `asn` (first, once) or without it: the model's `passkeyAsns` after a passkey was used or found missing. */
export function withPasskeyAsn(list: readonly number[], asn: number | undefined, present: boolean): readonly number[] {
  if (asn === undefined || list.includes(asn) === present) return list;
  return present ? [asn, ...list].slice(0, 20) : list.filter((a) => a !== asn);
}
/** Document 1: the page must run in a secure context; it then stops before any call. */
export const INSECURE_CONTEXT = 'This page must be opened over HTTPS (or on localhost): it signs you in, and that must not travel unencrypted.';
export const INSECURE_EXPLANATION =
  'The address of this page starts with http:// on a host other than localhost. Start again from the application; if it keeps sending you here, tell its operator that the identity service must be served over HTTPS.';
const MAX_ASN = 4294967295;

export function initialModel(): Model {
  return { screen: { name: 'loading' }, passkeys: false, passkeyAsns: [] };
}

/** `AS4242420000`, `as4242420000` or `4242420000`; anything else, or out of range, is undefined. */
export function parseAsn(text: string): number | undefined {
  const m = /^\s*(?:AS)?(\d{1,10})\s*$/i.exec(text);
  if (!m) return undefined;
  const asn = Number(m[1]);
  return asn >= 1 && asn <= MAX_ASN ? asn : undefined;
}

/** The next model and the effect the runner is to perform, if any. */
export type Step = [Model, Effect?];

/**
 * The body of `approve`: the `params` object of authorize-context as it came
 * (never rebuilt from the query) plus `deny`.
 */
export function approveBody(params: Record<string, unknown>, deny: boolean): Record<string, unknown> {
  return { ...params, deny };
}
