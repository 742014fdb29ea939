import type { VerificationMethod } from './events.js';
import type { VerificationOption } from '../registry/options.js';

/**
 * The identity contract's views (document 1, Resources) that the service sends
 * and the authorization page reads (`web/authorize/types.ts`): types only, so
 * the page cannot drift from the server and bundles nothing of it.
 */

export type AuthMethod = 'email' | 'pgp' | 'ssh' | 'passkey';

/** The contract's session grant (document 1, Session grant). */
export interface SessionGrant {
  token: string;
  asn: number;
  mntner: string;
  method: AuthMethod;
  expires_at: string;
  passkey_enrollment_available?: boolean;
}

/** The contract's Challenge resource. */
export interface ChallengeView {
  challenge_id: string;
  method: VerificationMethod;
  nonce?: string;
  instructions: string;
  sent_to?: string;
  expires_at: string;
  reused: boolean;
  resend_available_in: number;
  captcha_pass?: string;
  captcha_pass_expires_in?: number;
}

/** The contract's option, as clients see it: e-mail masked, the captcha policy decided here. */
export interface OptionView {
  id: string;
  kind: VerificationOption['kind'];
  method: string;
  value: string;
  comment: string;
  mntner: string;
  captcha_required: boolean;
}

export interface OptionsView {
  asn: number;
  as_name: string;
  display_name: string;
  mntners: string[];
  options: OptionView[];
}

/** The answer of `passkeys/login/begin` and `register/begin`: its options go to the browser's JSON parsers as they are. */
export interface CeremonyView {
  ceremony_id: string;
  options: Record<string, unknown>;
}
