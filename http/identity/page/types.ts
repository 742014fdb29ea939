/** Shapes of the identity API the page reads (document 1, Resources). */

export type MethodKind = 'email' | 'pgp' | 'ssh';

export interface VerificationOption {
  id: string;
  kind: MethodKind;
  method: string;
  value: string;
  comment: string;
  mntner: string;
  captcha_required: boolean;
}

export interface VerificationOptions {
  asn: number;
  as_name: string;
  display_name: string;
  mntners: string[];
  options: VerificationOption[];
}

export interface Challenge {
  challenge_id: string;
  method: MethodKind;
  nonce?: string;
  instructions: string;
  sent_to?: string;
  expires_at: string;
  reused: boolean;
  resend_available_in: number;
  captcha_pass?: string;
  captcha_pass_expires_in?: number;
}

export interface SessionGrant {
  token: string;
  asn: number;
  mntner: string;
  method: MethodKind | 'passkey';
  expires_at: string;
  /** Only on challenge submit; absent counts as false. */
  passkey_enrollment_available?: boolean;
}

/** A WebAuthn ceremony of `login/begin` or `register/begin`. */
export interface Ceremony {
  ceremony_id: string;
  options: Record<string, unknown>;
}
