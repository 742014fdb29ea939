import { solveChallenge } from 'altcha-lib';
import { deriveKey as webDeriveKey } from 'altcha-lib/algorithms/web/sha';
import type { Challenge, ChallengeParameters, DeriveKeyFunctionResult } from 'altcha-lib/types';
import { call, type ApiResult, type Fetch } from './api.js';
import type { AuthorizeContextView } from '../../domain/identity/authorize-context.js';
import { sha256 } from './sha256.js';

/** A one-time ticket for `captcha_token`, or the failure to show (status 0: no answer or not solved). */
export type TicketOutcome = { ticket: string } | { failure: ApiResult };

/**
 * The captcha the backend named in `authorize-context.captcha` (kind and endpoint
 * come at runtime; the page hard-codes neither). Tickets are one-time, so each
 * call of `ticket()` yields a fresh one.
 */
export interface CaptchaSource {
  /** Starts getting a ticket in the background, so that `ticket()` is quick. */
  prepare(): void;
  ticket(): Promise<TicketOutcome>;
}

export const PUZZLE_UNSOLVED = 'The anti-abuse puzzle could not be solved in time. Try again.';
export const WIDGET_UNAVAILABLE = 'The captcha could not be loaded. Check your connection and try again.';
/** The action the external widget must report on this flow (document 1: not interchangeable with the login's). */
export const WIDGET_ACTION = 'peering-verify';
/**
 * A prepared ticket older than this (by the browser's clock, from when its puzzle
 * was fetched) is thrown away rather than spent. Puzzles live 10 minutes on the
 * server; the puzzle's own expiry is not compared, as the browser's clock may be off.
 */
export const PREPARED_TICKET_MAX_AGE_MS = 5 * 60_000;

export function captchaSource(
  captcha: AuthorizeContextView['captcha'],
  deps: { fetch: Fetch; widgetSlot: () => HTMLElement; loadScript: (src: string) => Promise<void> },
): CaptchaSource {
  if (captcha.kind === 'pow' && captcha.endpoint) return powSource(captcha.endpoint, deps.fetch);
  if (captcha.kind === 'external' && captcha.endpoint) return widgetSource(captcha.endpoint, deps);
  // `none`, or a kind without an endpoint: send no ticket; the server refuses if it wanted one.
  return { prepare() {}, ticket: async () => ({ ticket: '' }) };
}

/** ALTCHA proof of work, solved in the browser with WebCrypto SHA-256 (altcha-lib's own solver). */
export function powSource(endpoint: string, fetchFn: Fetch, now: () => number = Date.now): CaptchaSource {
  let pending: Promise<TicketOutcome & { fetchedAt: number }> | undefined;
  const solveOne = async (): Promise<TicketOutcome & { fetchedAt: number }> => {
    const fetchedAt = now();
    const puzzle = await call(fetchFn, 'GET', endpoint);
    if (puzzle.status !== 200) return { failure: puzzle, fetchedAt };
    const challenge = puzzle.body as Challenge;
    const solution = await solveChallenge({ challenge, deriveKey, timeout: 90_000 });
    if (!solution) return { failure: { status: 0, body: { detail: PUZZLE_UNSOLVED } }, fetchedAt };
    return { ticket: encodeTicket(challenge, solution), fetchedAt };
  };
  const plain = ({ fetchedAt: _, ...outcome }: TicketOutcome & { fetchedAt: number }): TicketOutcome => outcome;
  return {
    prepare() {
      pending ??= solveOne();
    },
    async ticket() {
      const prepared = pending;
      pending = undefined;
      if (prepared) {
        const outcome = await prepared;
        // A prepared failure (the network was down then) or an old ticket is not used: try again now.
        if ('ticket' in outcome && now() - outcome.fetchedAt <= PREPARED_TICKET_MAX_AGE_MS) return plain(outcome);
      }
      return plain(await solveOne());
    },
  };
}

/**
 * altcha-lib's key derivation for SHA-256 (`cost` rounds over salt + password,
 * cut to `keyLength`), with the plain-JavaScript hash; other algorithms go to
 * the library's WebCrypto version.
 */
export async function deriveKey(parameters: ChallengeParameters, salt: Uint8Array, password: Uint8Array): Promise<DeriveKeyFunctionResult> {
  if (parameters.algorithm !== 'SHA-256') return webDeriveKey(parameters, salt, password);
  let key: Uint8Array = new Uint8Array(salt.length + password.length);
  key.set(salt);
  key.set(password, salt.length);
  for (let i = 0; i < Math.max(1, parameters.cost); i++) key = sha256(key);
  return { parameters: {}, derivedKey: key.slice(0, parameters.keyLength ?? 32) };
}

/** What the widget submits: base64 of the JSON `{challenge, solution}` (the server's `encodeTicket`). */
export function encodeTicket(challenge: Challenge, solution: { counter: number; derivedKey: string }): string {
  const json = JSON.stringify({
    challenge: { parameters: challenge.parameters, signature: challenge.signature },
    solution: { counter: solution.counter, derivedKey: solution.derivedKey },
  });
  let binary = '';
  for (const byte of new TextEncoder().encode(json)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** A Turnstile-compatible widget API, as the external provider's script installs it. */
interface WidgetApi {
  render(container: HTMLElement, options: Record<string, unknown>): string;
  reset(id?: string): void;
}

/**
 * An external widget: its script is loaded from the endpoint, rendered once with
 * the action `peering-verify` (the site key, when the provider needs one, is the
 * `sitekey` parameter of the endpoint URL), and reset after every ticket it gave
 * out, because a ticket is spent by the server.
 */
function widgetSource(endpoint: string, deps: { widgetSlot: () => HTMLElement; loadScript: (src: string) => Promise<void> }): CaptchaSource {
  let id: string | undefined;
  let api: WidgetApi | undefined;
  let token: string | undefined;
  let waiting: ((token: string) => void) | undefined;
  const mount = async (): Promise<boolean> => {
    if (api) return true;
    try {
      await deps.loadScript(endpoint);
    } catch {
      return false;
    }
    api = (globalThis as { turnstile?: WidgetApi }).turnstile;
    if (!api) return false;
    const sitekey = new URL(endpoint, location.href).searchParams.get('sitekey') ?? undefined;
    const slot = deps.widgetSlot();
    slot.hidden = false;
    id = api.render(slot, {
      sitekey,
      action: WIDGET_ACTION,
      callback: (t: string) => (waiting ? (waiting(t), (waiting = undefined)) : (token = t)),
      'expired-callback': () => (token = undefined),
    });
    return true;
  };
  return {
    prepare() {
      void mount();
    },
    async ticket() {
      if (!(await mount())) return { failure: { status: 0, body: { detail: WIDGET_UNAVAILABLE } } };
      const t = token ?? (await new Promise<string>((resolve) => (waiting = resolve)));
      token = undefined;
      api!.reset(id);
      return { ticket: t };
    },
  };
}
