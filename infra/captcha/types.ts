/**
 * Captcha verification, shared by the control login and the identity service.
 * A ticket is what the client's widget produced; the server verifies it once.
 */
import type { CaptchaKind } from '../../domain/identity/authorize-context.js';

export type { CaptchaKind };

export interface VerifyContext {
  /** The client address, passed on to an external provider. */
  remoteIp?: string;
  /** The current time (from the caller's clock, so tests can move it). */
  now: Date;
}

export interface CaptchaVerifier {
  readonly kind: CaptchaKind;
  /**
   * True only for a valid ticket seen for the first time by any instance; a
   * replayed, forged, expired or malformed ticket is false. Never throws for a
   * bad ticket; a provider that cannot be reached counts as a refusal.
   */
  verify(ticket: string, context: VerifyContext): Promise<boolean>;
}

/** Proof-of-work providers also hand out the challenges their tickets answer. */
export interface ChallengeIssuer<C = unknown> {
  issueChallenge(now: Date): Promise<C>;
}
