import { externalCaptcha } from './external.js';
import { noCaptcha } from './none.js';
import { powCaptcha } from './pow.js';
import type { Config } from '../config.js';
import type { EventStore } from '../eventstore/types.js';
import { eventStoreSpentTickets, type SpentTickets } from './spent.js';
import type { CaptchaKind, CaptchaVerifier, ChallengeIssuer } from './types.js';

export type { CaptchaKind, CaptchaVerifier, ChallengeIssuer, VerifyContext } from './types.js';
export { eventStoreSpentTickets, type SpentTickets } from './spent.js';
export { encodeTicket, powCaptcha } from './pow.js';
export { externalCaptcha } from './external.js';
export { noCaptcha } from './none.js';

export interface CaptchaSettings {
  kind: CaptchaKind | undefined;
  /** pow: the HMAC key of challenges. */
  powSecret?: string;
  powMaxNumber?: number;
  /** external: siteverify URL and secret, and the action the widget must report. */
  verifyUrl?: string;
  verifySecret?: string;
  expectedAction?: string;
}

/**
 * The provider a setting names. A kind whose settings are missing gives the
 * `none` provider, which refuses every ticket: a captcha that is not configured
 * fails closed.
 */
export function createCaptcha(settings: CaptchaSettings, spent: SpentTickets): CaptchaVerifier & Partial<ChallengeIssuer> {
  switch (settings.kind) {
    case 'pow':
      return settings.powSecret ? powCaptcha({ secret: settings.powSecret, spent, maxNumber: settings.powMaxNumber }) : noCaptcha();
    case 'external':
      return settings.verifyUrl && settings.verifySecret
        ? externalCaptcha({ verifyUrl: settings.verifyUrl, secret: settings.verifySecret, expectedAction: settings.expectedAction, spent })
        : noCaptcha();
    case 'none':
    case undefined:
      return noCaptcha();
    default: {
      const _never: never = settings.kind;
      return _never;
    }
  }
}

/**
 * The provider of `kind` with the shared captcha settings of the configuration
 * (`CAPTCHA_SECRET`, `CAPTCHA_VERIFY_URL`, `CAPTCHA_VERIFY_SECRET`), its tickets
 * spent in the event store. Each flow names its own kind and widget action.
 */
export function configuredCaptcha(
  config: Config,
  kind: CaptchaKind | undefined,
  expectedAction: string,
  store: EventStore,
): CaptchaVerifier & Partial<ChallengeIssuer> {
  return createCaptcha(
    { kind, powSecret: config.captchaSecret, verifyUrl: config.captchaVerifyUrl, verifySecret: config.captchaVerifySecret, expectedAction },
    eventStoreSpentTickets(store),
  );
}
