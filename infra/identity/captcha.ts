import { configuredCaptcha, type CaptchaKind, type ChallengeIssuer, type VerifyContext } from '../captcha/index.js';
import type { Config } from '../config.js';
import type { EventStore } from '../eventstore/types.js';

/** The action an external widget on the peering verification page must report (not the login's). */
export const PEERING_VERIFY_ACTION = 'peering-verify';

/** Where clients of the identity service fetch a proof-of-work puzzle (same origin, relative). */
export const POW_CHALLENGE_PATH = '/api/v1/captcha/challenge';

/** What a client needs to show the captcha: `authorize-context.captcha` of the contract. */
export interface CaptchaDescriptor {
  kind: CaptchaKind;
  /** pow: the puzzle endpoint; external: the widget script (`CAPTCHA_WIDGET_URL`) or null; none: null. */
  endpoint: string | null;
}

/**
 * The captcha of the identity service's verification flow, from `CAPTCHA_KIND`:
 * - `pow`: ALTCHA puzzles signed with `CAPTCHA_SECRET`, issued at `POW_CHALLENGE_PATH`;
 * - `external`: a Turnstile-compatible siteverify (`CAPTCHA_VERIFY_URL`, `CAPTCHA_VERIFY_SECRET`)
 *   whose answer must carry the action `peering-verify`;
 * - `none`: the flow is open; no option requires a captcha (unlike the control login,
 *   where an absent captcha refuses every login).
 * A `pow` or `external` kind whose secret or URL is missing refuses every ticket:
 * it fails closed, options still say `captcha_required`.
 * Tickets are one-time across instances (spent-ticket streams in the event store).
 */
export interface IdentityCaptcha extends CaptchaDescriptor {
  /** False only for `none`: then nothing in the flow asks for a captcha. */
  readonly enabled: boolean;
  verify(ticket: string, context: VerifyContext): Promise<boolean>;
  /** pow only, and only when it is configured. */
  issueChallenge?: ChallengeIssuer['issueChallenge'];
}

/** The descriptor alone, for callers that only tell clients which captcha to show (authorize-context). */
export function captchaDescriptor(config: Config): CaptchaDescriptor {
  switch (config.captchaKind) {
    case 'pow':
      return { kind: 'pow', endpoint: POW_CHALLENGE_PATH };
    case 'external':
      return { kind: 'external', endpoint: config.captchaWidgetUrl ?? null };
    case 'none':
      return { kind: 'none', endpoint: null };
    default: {
      const _never: never = config.captchaKind;
      return _never;
    }
  }
}

/**
 * The identity captcha of a configuration, its tickets spent in `store`. Built once
 * per app (the verification routes share it). `none` and a kind missing its settings
 * both get the provider that refuses every ticket; only the descriptor tells them apart.
 */
export function identityCaptcha(deps: { config: Config; store: EventStore }): IdentityCaptcha {
  const { config } = deps;
  const descriptor = captchaDescriptor(config);
  const provider = configuredCaptcha(config, descriptor.kind, PEERING_VERIFY_ACTION, deps.store);
  return { ...provider, ...descriptor, enabled: descriptor.kind !== 'none' };
}
